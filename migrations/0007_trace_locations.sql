CREATE TABLE `trace_run_locations` (
	`workspace_id` text NOT NULL,
	`run_id` text NOT NULL,
	`project_id` text NOT NULL,
	`day` text NOT NULL,
	PRIMARY KEY(`workspace_id`, `run_id`)
);
--> statement-breakpoint
CREATE TABLE `trace_shards` (
	`workspace_id` text NOT NULL,
	`project_id` text NOT NULL,
	`day` text NOT NULL,
	PRIMARY KEY(`workspace_id`, `project_id`, `day`)
);
