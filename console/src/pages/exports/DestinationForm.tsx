import { type FormEvent, useState } from "react";
import { api } from "../../api.ts";
import { ErrorBox } from "../../components/ErrorBox.tsx";
import type { Destination } from "./types.ts";

type Kind = "r2" | "s3";

const EMPTY = {
  display_name: "",
  bucket_name: "",
  prefix: "",
  r2_binding: "EXPORT_BUCKET",
  endpoint_url: "",
  region: "",
  addressing_style: "auto",
  access_key_id: "",
  secret_access_key: "",
  session_token: "",
};

/**
 * Creates a destination: the deployment's R2 binding (no credentials), or an S3-compatible bucket
 * with its keys. The server proves write access with a test object first. The form is cleared after
 * it is sent, so no secret stays in the page.
 */
export function DestinationForm({ onCreated }: { onCreated: (destination: Destination) => void }) {
  const [kind, setKind] = useState<Kind>("r2");
  const [fields, setFields] = useState(EMPTY);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>();
  const set = (name: keyof typeof EMPTY) => (event: { target: { value: string } }) =>
    setFields((current) => ({ ...current, [name]: event.target.value }));

  async function submit(event: FormEvent) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    const config =
      kind === "r2"
        ? { bucket_name: fields.bucket_name, prefix: fields.prefix, r2_binding: fields.r2_binding }
        : {
            bucket_name: fields.bucket_name,
            prefix: fields.prefix,
            endpoint_url: fields.endpoint_url || null,
            region: fields.region || null,
            config_kwargs_s3:
              fields.addressing_style === "auto"
                ? null
                : { addressing_style: fields.addressing_style as "virtual" | "path" },
          };
    const credentials =
      kind === "s3" && fields.access_key_id
        ? {
            access_key_id: fields.access_key_id,
            secret_access_key: fields.secret_access_key,
            session_token: fields.session_token || null,
          }
        : undefined;
    try {
      const created = await api<Destination>("/api/v1/bulk-exports/destinations", {
        body: { display_name: fields.display_name, config, credentials },
      });
      setFields(EMPTY);
      onCreated(created);
    } catch (reason) {
      setError(reason);
      // A refused secret is not kept in the form either.
      setFields((current) => ({ ...current, secret_access_key: "", session_token: "" }));
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="card export-form" aria-label="New destination" onSubmit={submit} autoComplete="off">
      <h3>New destination</h3>
      <fieldset className="row">
        <legend className="sr-only">Kind</legend>
        <label className="checkbox">
          <span>
            <input type="radio" name="kind" checked={kind === "r2"} onChange={() => setKind("r2")} /> R2 binding of this
            deployment
          </span>
        </label>
        <label className="checkbox">
          <span>
            <input type="radio" name="kind" checked={kind === "s3"} onChange={() => setKind("s3")} /> S3-compatible
            bucket
          </span>
        </label>
      </fieldset>
      <div className="form-grid">
        <label>
          Name
          <input required value={fields.display_name} onChange={set("display_name")} />
        </label>
        <label>
          Bucket
          <input required value={fields.bucket_name} onChange={set("bucket_name")} placeholder="my-exports" />
        </label>
        <label>
          Prefix
          <input value={fields.prefix} onChange={set("prefix")} placeholder="exports" />
        </label>
        {kind === "r2" ? (
          <label>
            R2 binding
            <input required value={fields.r2_binding} onChange={set("r2_binding")} />
          </label>
        ) : (
          <>
            <label>
              Endpoint URL
              <input type="url" value={fields.endpoint_url} onChange={set("endpoint_url")} placeholder="https://…" />
            </label>
            <label>
              Region
              <input value={fields.region} onChange={set("region")} placeholder="us-east-1" />
            </label>
            <label>
              Addressing style
              <select value={fields.addressing_style} onChange={set("addressing_style")}>
                <option value="auto">auto</option>
                <option value="path">path</option>
                <option value="virtual">virtual</option>
              </select>
            </label>
            <label>
              Access key ID
              <input value={fields.access_key_id} onChange={set("access_key_id")} />
            </label>
            <label>
              Secret access key
              <input type="password" value={fields.secret_access_key} onChange={set("secret_access_key")} />
            </label>
            <label>
              Session token (optional)
              <input type="password" value={fields.session_token} onChange={set("session_token")} />
            </label>
          </>
        )}
      </div>
      {kind === "s3" ? (
        <p className="muted">Leave the keys empty to use the deployment's default bucket credentials.</p>
      ) : null}
      <ErrorBox error={error} />
      <div className="row">
        <button type="submit" disabled={busy}>
          {busy ? "Checking write access…" : "Create destination"}
        </button>
      </div>
    </form>
  );
}
