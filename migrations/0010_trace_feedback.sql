CREATE TABLE `trace_feedback` (
	`id` text NOT NULL,
	`workspace_id` text NOT NULL,
	`run_id` text,
	`trace_id` text,
	`project_id` text,
	`day` text,
	`key` text NOT NULL,
	`score` real,
	`value` text,
	`comment` text,
	`correction` text,
	`feedback_source` text,
	`feedback_group_id` text,
	`comparative_experiment_id` text,
	`created_at` text NOT NULL,
	`modified_at` text NOT NULL,
	PRIMARY KEY(`workspace_id`, `id`)
);
--> statement-breakpoint
CREATE INDEX `trace_feedback_run_idx` ON `trace_feedback` (`workspace_id`,`run_id`);--> statement-breakpoint
CREATE INDEX `trace_feedback_created_idx` ON `trace_feedback` (`workspace_id`,`created_at`);