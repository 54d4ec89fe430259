CREATE TABLE `store_items` (
	`workspace_id` text NOT NULL,
	`namespace` text NOT NULL,
	`key` text NOT NULL,
	`value` text NOT NULL,
	`created_at` text NOT NULL,
	`updated_at` text NOT NULL,
	`ttl_minutes` integer,
	`expires_at` text,
	PRIMARY KEY(`workspace_id`, `namespace`, `key`)
);
--> statement-breakpoint
CREATE INDEX `store_items_expires_idx` ON `store_items` (`expires_at`);