//! How a failed exchange with a peer is put into words: what a transport
//! or TLS error means for the operator and what to do, a URL without its
//! credentials, and a peer's error answer on one line without paths or
//! markup. Every message it makes is safe to store, log and show.

/// Whether a transport error says the connection was gone before the
/// request could be sent or answered. Over TLS 1.3 a server that requires a
/// client certificate checks it only after the handshake has completed on
/// our side, so its refusal (an alert, then the close) races our request:
/// we see either the alert or, as often, only the closed connection.
pub(super) fn closed_after_handshake(text: &str) -> bool {
    ["connection was not ready", "connection closed before message completed", "connection reset"]
        .iter()
        .any(|phrase| text.to_ascii_lowercase().contains(phrase))
}

/// What [`closed_after_handshake`] most likely means for the operator.
pub(super) fn refused_after_handshake(text: &str) -> String {
    format!(
        "the peer closed the connection right after the TLS handshake ({text}): a peer that requires a client \
         certificate does this when we present none it trusts; give one its CA issued with --tls-client-cert \
         and --tls-client-key (or client_cert and client_key in its [[peer]])"
    )
}

/// The rustls error behind `e`, if it is one. TLS errors reach us wrapped
/// in (nested) `io::Error`s, whose `source()` skips the wrapped error.
pub(super) fn rustls_error<'a>(mut e: &'a (dyn std::error::Error + 'static)) -> Option<&'a rustls::Error> {
    loop {
        if let Some(tls) = e.downcast_ref::<rustls::Error>() {
            return Some(tls);
        }
        e = e.downcast_ref::<std::io::Error>()?.get_ref()?;
    }
}

/// What a TLS failure means for the operator, and what to do.
pub(super) fn tls_problem(e: &rustls::Error) -> String {
    use rustls::{AlertDescription, CertificateError, Error};
    let hint = match e {
        Error::InvalidCertificate(CertificateError::UnknownIssuer | CertificateError::BadSignature) => {
            "the peer's certificate is not issued by a CA we trust; set `ca` in its [[peer]] to the CA that \
             issued it"
        }
        Error::InvalidCertificate(
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
        ) => "the peer's certificate does not name the host of its URL; use a name or address it covers",
        Error::InvalidCertificate(
            CertificateError::Expired
            | CertificateError::ExpiredContext { .. }
            | CertificateError::NotValidYet
            | CertificateError::NotValidYetContext { .. },
        ) => "the peer's certificate is outside its validity period (or our clock is wrong)",
        Error::AlertReceived(
            AlertDescription::CertificateRequired
            | AlertDescription::HandshakeFailure
            | AlertDescription::BadCertificate
            | AlertDescription::UnknownCA
            | AlertDescription::CertificateUnknown
            | AlertDescription::AccessDenied,
        ) => {
            "the peer refused our client certificate, or our lack of one; give one its CA issued with \
             --tls-client-cert and --tls-client-key (or client_cert and client_key in its [[peer]])"
        }
        _ => "",
    };
    let text = one_line(&e.to_string(), 200);
    if hint.is_empty() { text } else { format!("{text}: {hint}") }
}

/// `url` as an error may show it: scheme, host, port and path; never its
/// credentials or query.
pub(super) fn shown_url(url: &reqwest::Url) -> String {
    let port = url.port().map_or(String::new(), |p| format!(":{p}"));
    format!("{}://{}{port}{}", url.scheme(), url.host_str().unwrap_or(""), url.path())
}

/// The `error` member of an ECP error answer, or else the first line of the
/// body's text (without its tags when it is `markup`, HTML or XML: a proxy's
/// error page); absolute file paths in it (Go nodes show theirs) replaced by
/// `<path>`, since the message is stored, logged and shown — on one line of
/// at most 200 characters.
pub(super) fn error_message(body: &[u8], markup: bool) -> String {
    // Only the start is read: the line shown is cut to 200 characters anyway.
    let start = String::from_utf8_lossy(&body[..body.len().min(64 * 1024)]);
    let text = serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(str::to_owned))
        .unwrap_or_else(|| {
            let plain = if markup || start.trim_start().starts_with('<') {
                without_tags(&start)
            } else {
                start.into_owned()
            };
            plain.lines().map(str::trim).find(|line| !line.is_empty()).unwrap_or("").to_owned()
        });
    let redacted: Vec<&str> = text
        .split(' ')
        .map(|word| {
            let path = word.trim_start_matches(['"', '\'', '(']);
            let endpoint = path.starts_with("/ecp/") || path.starts_with("/v1/");
            if path.starts_with('/') && path.matches('/').count() >= 2 && !endpoint { "<path>" } else { word }
        })
        .collect();
    one_line(&redacted.join(" "), 200)
}

/// The text of markup: each tag (and comment, and the content of `script`
/// and `style` elements) becomes a line break, so that the first line of
/// what is left is the page's first words — an error page's title.
fn without_tags(markup: &str) -> String {
    // ASCII lowercasing keeps every byte offset: positions found in `lower`
    // cut `markup` at the same places, and each byte is looked at once.
    let lower = markup.to_ascii_lowercase();
    let mut out = String::with_capacity(markup.len());
    let mut at = 0;
    while let Some(open) = lower[at..].find('<').map(|i| at + i) {
        out.push_str(&markup[at..open]);
        out.push('\n');
        let Some(close) = lower[open..].find('>').map(|i| open + i) else { return out };
        let name = lower[open + 1..close].split(|c: char| c.is_whitespace() || c == '/').next().unwrap_or("");
        at = close + 1;
        if name == "script" || name == "style" {
            at = lower[at..].find(&format!("</{name}")).map_or(lower.len(), |i| at + i);
        }
    }
    out.push_str(&markup[at..]);
    out.replace("&nbsp;", " ").replace("&amp;", "&")
}

/// `text` on one line, at most `max` characters, control characters dropped.
pub(super) fn one_line(text: &str, max: usize) -> String {
    let mut out: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(max)
        .collect::<String>()
        .trim()
        .to_owned();
    if text.chars().count() > max {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_connection_closed_after_the_handshake_names_the_client_certificate() {
        for text in [
            "connection was not ready",
            "Connection closed before message completed",
            "connection reset by peer",
        ] {
            assert!(closed_after_handshake(text), "{text}");
            let told = refused_after_handshake(text);
            assert!(told.contains("client certificate") && told.contains("--tls-client-cert"), "{told}");
        }
        for text in ["Connection refused (os error 111)", "dns error: no such host"] {
            assert!(!closed_after_handshake(text), "{text}");
        }
    }

    #[test]
    fn error_messages_come_from_the_ecp_error_member_on_one_line() {
        assert_eq!(
            error_message(br#"{"error":"X-ECP-HMAC\ndoes not match","code":"bad_signature"}"#, false),
            "X-ECP-HMAC does not match"
        );
        assert_eq!(error_message(b"plain text", false), "plain text");
        assert_eq!(
            error_message(
                br#"{"error":"open /home/ok/.ok/skills/x.json: denied; see /ecp/manifest"}"#,
                false
            ),
            "open <path> denied; see /ecp/manifest"
        );
    }

    #[test]
    fn a_body_that_is_not_ecp_json_is_shown_as_its_first_line_of_text_without_markup() {
        let nginx = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad \
                     Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n";
        assert_eq!(error_message(nginx.as_bytes(), true), "502 Bad Gateway");
        let one_line_page = "<!DOCTYPE html><html><head><script>var x = \"<b>not this</b>\";</script>\
                             <STYLE>p { color: red }</STYLE></head><body><p>Service&nbsp;down &amp; out</p></body>";
        assert_eq!(
            error_message(one_line_page.as_bytes(), false),
            "Service down & out",
            "markup told by its start"
        );
        assert_eq!(error_message(b"first line\nsecond line", false), "first line");
        assert_eq!(error_message(b"\n\n  a < b, so no tags here\n", false), "a < b, so no tags here");
        assert_eq!(error_message(b"<p>unclosed <b", true), "unclosed");
        let longest = format!("<h1>{}</h1>", "x".repeat(200));
        assert_eq!(error_message(longest.as_bytes(), true), "x".repeat(200), "200 characters are kept");
        let long = format!("<h1>{}</h1>", "x".repeat(201));
        assert_eq!(error_message(long.as_bytes(), true), format!("{}…", "x".repeat(200)), "cut at 200");
        assert_eq!(error_message(b"", true), "");
    }

    #[test]
    fn a_url_is_shown_without_its_credentials_or_query() {
        let url =
            reqwest::Url::parse("https://user:pw@peer.example:8443/ecp/skills?since=4&limit=9").unwrap();
        assert_eq!(shown_url(&url), "https://peer.example:8443/ecp/skills");
        let url = reqwest::Url::parse("http://127.0.0.1/ecp/manifest").unwrap();
        assert_eq!(shown_url(&url), "http://127.0.0.1/ecp/manifest");
        assert_eq!(one_line(&"a".repeat(300), 10), format!("{}…", "a".repeat(10)));
    }
}
