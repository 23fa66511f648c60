//! ctxeval-core: interval algebra and context-retrieval metrics.
pub fn version() -> &'static str {
    env!("CARGO_PKG_VERSION")
}
