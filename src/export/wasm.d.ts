// parquet-wasm's binary as wrangler bundles it (a compiled module). Named here, not only by
// worker-configuration.d.ts's "*.wasm", so that Node type checks of code importing parquet.ts pass too.
declare module "parquet-wasm/esm/parquet_wasm_bg.wasm" {
  const module: WebAssembly.Module;
  export default module;
}
