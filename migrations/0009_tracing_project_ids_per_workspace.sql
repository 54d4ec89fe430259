-- Tracing project ids are unique per workspace, not across the deployment: a create with an id
-- another workspace already uses must not be told (or shown) that it exists. SQLite cannot change a
-- primary key in place, so the table is rebuilt with (workspace_id, id) as its key.
CREATE TABLE `tracing_projects_new` (
	`id` text NOT NULL,
	`workspace_id` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`extra` text,
	`reference_dataset_id` text,
	`default_dataset_id` text,
	`trace_tier` text,
	`start_time` text NOT NULL,
	`end_time` text,
	`created_at` text NOT NULL,
	PRIMARY KEY(`workspace_id`, `id`)
);
--> statement-breakpoint
INSERT INTO `tracing_projects_new` (`id`, `workspace_id`, `name`, `description`, `extra`, `reference_dataset_id`, `default_dataset_id`, `trace_tier`, `start_time`, `end_time`, `created_at`)
SELECT `id`, `workspace_id`, `name`, `description`, `extra`, `reference_dataset_id`, `default_dataset_id`, `trace_tier`, `start_time`, `end_time`, `created_at` FROM `tracing_projects`;
--> statement-breakpoint
DROP TABLE `tracing_projects`;
--> statement-breakpoint
ALTER TABLE `tracing_projects_new` RENAME TO `tracing_projects`;
--> statement-breakpoint
CREATE UNIQUE INDEX `tracing_projects_name_idx` ON `tracing_projects` (`workspace_id`,`name`);
