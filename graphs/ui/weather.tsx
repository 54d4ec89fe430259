/**
 * The `weather` graph's generative UI (langgraph.json `ui`). The build bundles this file for the
 * browser; the default export maps each component name a graph pushes to its React component.
 */
/// <reference path="./css.d.ts" />
import "./weather.css";

export interface WeatherCardProps {
  city: string;
  temperature: number;
  conditions: string;
}

function WeatherCard({ city, temperature, conditions }: WeatherCardProps) {
  return (
    <div className="weather-card">
      <h3>{city}</h3>
      <p>
        {temperature}°C, {conditions}
      </p>
    </div>
  );
}

export default { weather: WeatherCard };
