// esbuild bundles imported stylesheets into the console's app-<hash>.css.
declare module "*.css";
