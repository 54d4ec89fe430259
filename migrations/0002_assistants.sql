CREATE TABLE `assistant_versions` (
	`workspace_id` text NOT NULL,
	`assistant_id` text NOT NULL,
	`version` integer NOT NULL,
	`graph_id` text NOT NULL,
	`config` text NOT NULL,
	`context` text NOT NULL,
	`metadata` text NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`created_at` text NOT NULL,
	PRIMARY KEY(`workspace_id`, `assistant_id`, `version`)
);
--> statement-breakpoint
CREATE TABLE `assistants` (
	`workspace_id` text NOT NULL,
	`assistant_id` text NOT NULL,
	`graph_id` text NOT NULL,
	`config` text NOT NULL,
	`context` text NOT NULL,
	`metadata` text NOT NULL,
	`version` integer NOT NULL,
	`name` text NOT NULL,
	`description` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	PRIMARY KEY(`workspace_id`, `assistant_id`)
);
--> statement-breakpoint
CREATE INDEX `assistants_workspace_created_idx` ON `assistants` (`workspace_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `assistants_workspace_graph_idx` ON `assistants` (`workspace_id`,`graph_id`);