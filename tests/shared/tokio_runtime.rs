//! The tokio runtime the async integration tests run on, included by `#[path]` from each test
//! that needs one (tokio is a dev-dependency: tests/support, a library, cannot name it).

/// A multi-thread runtime of two workers with I/O and time enabled: completions reach tasks
/// across threads, as in an axum server.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime of two workers")
}
