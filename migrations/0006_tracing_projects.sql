CREATE TABLE `tracing_projects` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`extra` text,
	`reference_dataset_id` text,
	`default_dataset_id` text,
	`trace_tier` text,
	`start_time` text NOT NULL,
	`end_time` text,
	`created_at` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `tracing_projects_name_idx` ON `tracing_projects` (`workspace_id`,`name`);