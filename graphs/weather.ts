import { AIMessage, HumanMessage } from "@langchain/core/messages";
import { Annotation, type LangGraphRunnableConfig, MessagesAnnotation, StateGraph } from "@langchain/langgraph";
import {
  type RemoveUIMessage,
  typedUi,
  type UIMessage,
  uiMessageReducer,
} from "@langchain/langgraph-sdk/react-ui/server";
import { messageText } from "./lib/message-text.ts";
import type components from "./ui/weather.tsx";

const CONDITIONS = ["sunny", "cloudy", "rainy", "windy", "snowy"];

/** A made-up but stable forecast for a city name: no network, the same answer every time. */
function forecast(city: string): { temperature: number; conditions: string } {
  let hash = 0;
  for (const char of city) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  return { temperature: (hash % 35) - 5, conditions: CONDITIONS[hash % CONDITIONS.length] };
}

const WeatherState = Annotation.Root({
  ...MessagesAnnotation.spec,
  // The UI messages the graph pushed, kept in state so a reloaded thread shows them again.
  ui: Annotation<UIMessage[], UIMessage | RemoveUIMessage | (UIMessage | RemoveUIMessage)[]>({
    reducer: uiMessageReducer,
    default: () => [],
  }),
});

/**
 * Generative UI example: answers with a forecast for the city in the last human message and pushes a
 * `weather` UI message (the `ui` entry of langgraph.json), streamed as a `custom` event.
 */
export const graph = new StateGraph(WeatherState)
  .addNode("forecast", (state: typeof WeatherState.State, config: LangGraphRunnableConfig) => {
    const lastHuman = state.messages.findLast((message) => HumanMessage.isInstance(message));
    const city = messageText(lastHuman).trim() || "Paris";
    const { temperature, conditions } = forecast(city);
    const message = new AIMessage({
      id: crypto.randomUUID(),
      content: `It is ${temperature}°C and ${conditions} in ${city}.`,
    });
    // push() streams the UI message to `custom` readers and writes it to the `ui` channel.
    typedUi<typeof components>(config).push({ name: "weather", props: { city, temperature, conditions } }, { message });
    return { messages: [message] };
  })
  .addEdge("__start__", "forecast")
  .addEdge("forecast", "__end__")
  .compile();
