CREATE TABLE `bulk_export_runs` (
	`id` text PRIMARY KEY NOT NULL,
	`export_id` text NOT NULL,
	`workspace_id` text NOT NULL,
	`session_id` text NOT NULL,
	`day` text NOT NULL,
	`start_time` text NOT NULL,
	`end_time` text NOT NULL,
	`status` text NOT NULL,
	`retry_number` integer DEFAULT 0 NOT NULL,
	`errors` text NOT NULL,
	`rows_written` integer DEFAULT 0 NOT NULL,
	`bytes_written` integer DEFAULT 0 NOT NULL,
	`files` text NOT NULL,
	`cursor` text,
	`prefix` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`finished_at` text
);
--> statement-breakpoint
CREATE INDEX `bulk_export_runs_export_idx` ON `bulk_export_runs` (`export_id`,`day`);--> statement-breakpoint
CREATE TABLE `bulk_exports` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`destination_id` text NOT NULL,
	`session_id` text NOT NULL,
	`start_time` text NOT NULL,
	`end_time` text,
	`filter` text,
	`export_fields` text,
	`format_version` text NOT NULL,
	`compression` text NOT NULL,
	`interval_hours` integer,
	`status` text NOT NULL,
	`source_bulk_export_id` text,
	`next_window_start` text,
	`started_at` text,
	`error` text,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`finished_at` text
);
--> statement-breakpoint
CREATE INDEX `bulk_exports_workspace_idx` ON `bulk_exports` (`workspace_id`,`created_at`);--> statement-breakpoint
CREATE INDEX `bulk_exports_status_idx` ON `bulk_exports` (`status`);--> statement-breakpoint
CREATE INDEX `bulk_exports_source_idx` ON `bulk_exports` (`source_bulk_export_id`);--> statement-breakpoint
CREATE TABLE `export_destinations` (
	`id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`destination_type` text NOT NULL,
	`display_name` text NOT NULL,
	`config` text NOT NULL,
	`credentials` text,
	`credentials_keys` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
CREATE INDEX `export_destinations_workspace_idx` ON `export_destinations` (`workspace_id`,`created_at`);