import { Component, type ComponentType, type ReactNode } from "react";
import { useParams } from "wouter";
import { isSafeId } from "../ids.ts";
import { ErrorBox } from "./ErrorBox.tsx";

/**
 * One page of the console: its route parameters are checked before the page may put them in an API
 * path, and a render error (data of an unexpected shape) shows on the page instead of blanking the app.
 */
export function PageBoundary({ page: Page }: { page: ComponentType }) {
  const params = useParams();
  const bad = Object.values(params).find((value) => typeof value === "string" && !isSafeId(value));
  if (bad !== undefined) return <ErrorBox error={new Error(`Not a valid id: ${JSON.stringify(bad)}`)} />;
  return (
    <RenderErrorBoundary>
      <Page />
    </RenderErrorBoundary>
  );
}

class RenderErrorBoundary extends Component<{ children: ReactNode }, { error: unknown }> {
  state = { error: undefined as unknown };

  static getDerivedStateFromError(error: unknown) {
    return { error };
  }

  render() {
    if (this.state.error) return <ErrorBox title="This page failed to render" error={this.state.error} />;
    return this.props.children;
  }
}
