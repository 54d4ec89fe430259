CREATE TABLE `crons` (
	`workspace_id` text NOT NULL,
	`cron_id` text PRIMARY KEY NOT NULL,
	`assistant_id` text NOT NULL,
	`thread_id` text,
	`schedule` text NOT NULL,
	`timezone` text NOT NULL,
	`payload` text NOT NULL,
	`metadata` text NOT NULL,
	`enabled` integer NOT NULL,
	`on_run_completed` text,
	`end_time` text,
	`user_id` text,
	`next_run_date` text,
	`disabled_reason` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `crons_due_idx` ON `crons` (`enabled`,`next_run_date`);--> statement-breakpoint
CREATE INDEX `crons_workspace_created_idx` ON `crons` (`workspace_id`,`created_at`);