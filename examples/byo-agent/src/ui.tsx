/** The greeter's generative UI: the components a node pushes by name (langgraph.json `ui`). */
function Greeting({ name }: { name: string }) {
  return <p className="greeting">Greeted {name}</p>;
}

export default { greeting: Greeting };
