// Stylesheets imported by UI components: esbuild bundles them into the graph's entrypoint.css.
declare module "*.css";
