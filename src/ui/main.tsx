/** The web UI's entry: the app into the page's root. */
import { render } from "preact";
import { App } from "./app.tsx";

render(<App />, document.getElementById("app")!);
