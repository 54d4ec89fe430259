import { useState } from "react";
import { langGraphClient } from "../../api.ts";
import { ErrorBox, Loading } from "../../components/ErrorBox.tsx";
import { useLoad } from "../../hooks.ts";
import { newCheckpointId } from "./HistoryTab.tsx";
import { StateUpdateForm } from "./StateUpdateForm.tsx";

/** Edits the thread's current values (optionally as a node), which adds a checkpoint on top. */
export function EditStateTab({
  threadId,
  nodes,
  version,
  onChange,
}: {
  threadId: string;
  nodes: string[] | undefined;
  version: number;
  onChange: () => void;
}) {
  const { data, error, loading } = useLoad(
    (signal) => langGraphClient().threads.getState(threadId, undefined, { signal }),
    [threadId, version],
  );
  const [saved, setSaved] = useState<string>();
  if (error) return <ErrorBox error={error} />;
  if (loading && !data) return <Loading />;
  if (!data) return null;
  return (
    <section className="card thread-edit">
      <h2>Edit the current state</h2>
      {saved ? (
        <p role="status" className="ok-note">
          State updated: new checkpoint <code>{saved}</code>
        </p>
      ) : null}
      <StateUpdateForm
        key={data.checkpoint?.checkpoint_id ?? "none"}
        label="Edit state"
        original={data.values}
        nodes={nodes}
        actions={[{ id: "update", label: "Update state" }]}
        onSubmit={async ({ values, asNode }) => {
          const result = await langGraphClient().threads.updateState(threadId, { values, asNode });
          setSaved(newCheckpointId(result));
          onChange();
        }}
      />
    </section>
  );
}
