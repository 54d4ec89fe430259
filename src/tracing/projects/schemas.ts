import { z } from "@hono/zod-openapi";
import { MAX_ID_LIST, MAX_JSON_FIELD_BYTES, MAX_NAME_LENGTH } from "../../core/limits.ts";
import { BoolQuery, Description, JsonObject, jsonWithin, Name } from "../../core/schemas.ts";
import { isoTime, nullMeansAbsent } from "../schemas.ts";

/** The wire shapes of tracing projects (`/api/v1/sessions`, LangSmith's "sessions"). */

const ProjectId = z.uuid().transform((id) => id.toLowerCase());

/** A project as the API returns it (LangSmith `TracerSession`). */
export const TracerSessionSchema = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string().nullable(),
    extra: z.record(z.string(), z.unknown()).nullable(),
    tenant_id: z.string(),
    reference_dataset_id: z.string().nullable(),
    default_dataset_id: z.string().nullable(),
    trace_tier: z.string().nullable(),
    start_time: z.string(),
    end_time: z.string().nullable(),
  })
  .openapi("TracerSession");
export type TracerSession = z.infer<typeof TracerSessionSchema>;

const editable = {
  description: Description.nullish(),
  extra: jsonWithin(JsonObject, MAX_JSON_FIELD_BYTES).nullish(),
  default_dataset_id: z.uuid().nullish(),
  trace_tier: z.enum(["longlived", "shortlived"]).nullish(),
  end_time: isoTime.nullish(),
};

// A null is "not sent" (the SDKs send `name: null`, `description: null`… for what they leave unset).
export const TracerSessionCreateSchema = nullMeansAbsent(
  z.object({
    id: ProjectId.optional(),
    name: z.string().trim().min(1).max(MAX_NAME_LENGTH),
    start_time: isoTime.optional(),
    reference_dataset_id: z.uuid().nullish(),
    ...editable,
  }),
).openapi("TracerSessionCreate");
export const TracerSessionUpdateSchema = nullMeansAbsent(
  z.object({ name: z.string().trim().min(1).max(MAX_NAME_LENGTH).optional(), ...editable }),
).openapi("TracerSessionUpdate");

/** A new project: its name, and optionally its id and any field an update may set. */
export type ProjectCreate = z.output<typeof TracerSessionCreateSchema>;
/** The fields a create or update names; absent fields stay untouched. */
export type ProjectFields = Partial<Omit<ProjectCreate, "id">>;

export const ProjectIdParams = z.object({ session_id: ProjectId });

export const ProjectListQuery = z.object({
  id: z
    .union([ProjectId, z.array(ProjectId).max(MAX_ID_LIST)])
    .optional()
    .describe(`Project ids, the parameter repeated (at most ${MAX_ID_LIST})`),
  name: Name.optional(),
  name_contains: Name.optional(),
  limit: z.coerce.number().int().min(1).max(100).default(100),
  offset: z.coerce.number().int().min(0).default(0),
});

export const UpsertQuery = z.object({ upsert: BoolQuery });
