CREATE TABLE `threads` (
	`workspace_id` text NOT NULL,
	`thread_id` text NOT NULL,
	`status` text NOT NULL,
	`metadata` text NOT NULL,
	`values` text,
	`values_indexed` integer DEFAULT true NOT NULL,
	`config` text NOT NULL,
	`interrupts` text NOT NULL,
	`error` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`state_updated_at` text NOT NULL,
	PRIMARY KEY(`workspace_id`, `thread_id`)
);
--> statement-breakpoint
CREATE INDEX `threads_workspace_created_idx` ON `threads` (`workspace_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `threads_workspace_updated_idx` ON `threads` (`workspace_id`,`updated_at`);--> statement-breakpoint
CREATE INDEX `threads_workspace_status_idx` ON `threads` (`workspace_id`,`status`);