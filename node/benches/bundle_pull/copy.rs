//! The baseline: a plain copy of the same files over loopback. A minimal
//! axum handler serves each file of a folder from disk at `GET /<path>`
//! (whole-file read, HTTP/1.1, no compression); the client fetches every
//! file with [`CONNECTIONS`] requests in flight on keep-alive connections
//! (reqwest's pool) and writes each to a new file under another folder,
//! without fsync — what a fast parallel copy (`rsync`/`cp` over a network
//! share) does, and nothing more: no hashing, no database, no scanning.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use axum::extract::{Path as UrlPath, State};
use axum::http::StatusCode;
use futures_util::StreamExt;

/// Requests in flight at once.
pub(crate) const CONNECTIONS: usize = 16;

/// What a copy moved.
pub(crate) struct Copied {
    pub(crate) files: usize,
    pub(crate) bytes: u64,
    pub(crate) elapsed: Duration,
}

/// Serves `root` on an ephemeral loopback port; returns its URL.
async fn serve(root: PathBuf) -> String {
    async fn file(
        State(root): State<PathBuf>,
        UrlPath(path): UrlPath<String>,
    ) -> Result<Vec<u8>, StatusCode> {
        tokio::fs::read(root.join(path)).await.map_err(|_| StatusCode::NOT_FOUND)
    }
    let app = axum::Router::new().route("/{*path}", axum::routing::get(file)).with_state(root);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("the copy server listens");
    let url = format!("http://{}", listener.local_addr().expect("its address"));
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

/// Copies every file of `paths` (relative to `from`) into `to` over HTTP.
pub(crate) async fn copy(from: &Path, paths: &[String], to: &Path) -> Copied {
    let url = serve(from.to_path_buf()).await;
    let client = reqwest::Client::builder()
        .no_proxy()
        .pool_max_idle_per_host(CONNECTIONS)
        .build()
        .expect("an HTTP client");
    let started = Instant::now();
    let sizes: Vec<u64> = futures_util::stream::iter(paths)
        .map(|path| {
            let (client, url, target) = (client.clone(), format!("{url}/{path}"), to.join(path));
            async move {
                let response = client.get(&url).send().await.expect("GET a file");
                assert_eq!(response.status(), StatusCode::OK, "{url}");
                let bytes = response.bytes().await.expect("its body");
                let dir = target.parent().expect("a folder");
                tokio::fs::create_dir_all(dir).await.expect("the target folder");
                tokio::fs::write(&target, &bytes).await.expect("the copy");
                bytes.len() as u64
            }
        })
        .buffer_unordered(CONNECTIONS)
        .collect()
        .await;
    Copied { files: sizes.len(), bytes: sizes.iter().sum(), elapsed: started.elapsed() }
}
