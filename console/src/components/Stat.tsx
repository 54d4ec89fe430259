import type { ReactNode } from "react";

/** One tile of a `.stats` row: a value over its label. `name` marks it for tests (`data-stat`). */
export function Stat({
  label,
  value,
  name,
  valueClassName,
}: {
  label: string;
  value: ReactNode;
  name?: string;
  valueClassName?: string;
}) {
  return (
    <div className="stat" data-stat={name}>
      <div className={valueClassName ? `value ${valueClassName}` : "value"}>{value}</div>
      <div className="label">{label}</div>
    </div>
  );
}
