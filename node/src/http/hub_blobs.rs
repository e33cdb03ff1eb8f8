//! `GET /ecp/blobs/{sha256}` on a hub replica: the blob streamed from the
//! hub's database a chunk at a time (`store::hub::CHUNK`, 1 MiB), each
//! chunk read by a query of its own, so that a download holds neither the
//! whole blob in memory nor a database connection while the client reads.

use axum::body::{Body, Bytes};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::answer::BodyDigest;
use super::error::ApiError;
use crate::store::hub::HubStore;

/// The blob `sha256` as a streamed answer, when the hub serves it.
pub(super) async fn get(hub: std::sync::Arc<HubStore>, sha256: String) -> Result<Option<Response>, ApiError> {
    let found = {
        let (hub, sha256) = (hub.clone(), sha256.clone());
        tokio::task::spawn_blocking(move || hub.served_blob(&sha256)).await??
    };
    let Some(blob) = found else { return Ok(None) };
    // The blob's SHA-256 is its name: the signature of the answer covers it.
    let digest = BodyDigest(sha256.clone());
    let chunks = futures_util::stream::unfold(0i32, move |n| {
        let (hub, sha256) = (hub.clone(), sha256.clone());
        async move {
            if n >= blob.chunks {
                return None;
            }
            let read = tokio::task::spawn_blocking(move || hub.blob_chunk(&sha256, n)).await;
            let chunk = match read {
                Ok(Ok(Some(bytes))) => Ok(Bytes::from(bytes)),
                // Collected mid-download: the answer ends short, and the
                // client's digest check refuses it.
                Ok(Ok(None)) => Err(std::io::Error::other("the blob was collected while it was sent")),
                Ok(Err(e)) => Err(std::io::Error::other(e.to_string())),
                Err(e) => Err(std::io::Error::other(e.to_string())),
            };
            // After an error the stream ends.
            let next = if chunk.is_ok() { n + 1 } else { blob.chunks };
            Some((chunk, next))
        }
    });
    let mut response = (
        StatusCode::OK,
        [
            (header::CONTENT_TYPE, HeaderValue::from_static("application/octet-stream")),
            (header::CONTENT_LENGTH, HeaderValue::from(blob.size)),
        ],
        Body::from_stream(chunks),
    )
        .into_response();
    response.extensions_mut().insert(digest);
    Ok(Some(response))
}
