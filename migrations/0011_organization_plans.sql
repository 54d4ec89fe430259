-- The plan tier of an organization (developer, plus, enterprise). Null: the deployment's DEFAULT_PLAN applies,
-- so existing organizations keep what the deployment grants until an admin sets a plan.
ALTER TABLE `organizations` ADD `plan` text;
