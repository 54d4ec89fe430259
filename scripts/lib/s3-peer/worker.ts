// The peer's own Worker only answers the readiness probe: the S3 API is served by wrangler itself
// at /cdn-cgi/local/r2/s3/<bucket> for the R2 binding declared in wrangler.toml.
export default {
  fetch(): Response {
    return new Response("ok");
  },
};
