//! Sinks: where code sends, runs or keeps a value. Network calls and DNS
//! lookups (a page's too: an image's `src`, a navigation; the sockets of
//! Go, Node's `dgram`, Ruby, Rust, Perl, Deno and Bun), process execution,
//! files and logs, and the terminal; in SQL,
//! a connection to another server (`dblink`, `UTL_HTTP`, a UNC path
//! `xp_dirtree` resolves) and `COPY … TO PROGRAM`.

use std::sync::LazyLock;

use crate::scan::rule::{Lazy, compile};

/// What a sink does with what reaches it, worst first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Kind {
    /// Printed to the terminal: the user sees it.
    Output,
    /// Written to a file or a log.
    File,
    /// Run as (part of) a command or code.
    Exec,
    /// Sent over the network, or looked up in DNS.
    Network,
}

static NETWORK: Lazy = LazyLock::new(|| {
    compile(
        r"\brequests\.(?:get|post|put|patch|delete|head|request)\b|\bhttpx\.(?:get|post|put|patch|request|stream)\b|\burlopen\b|\burllib\.request\.request\b|\burllib3\b|\bhttp\.client\.https?connection\b|\bsocket\.(?:create_connection|gethostbyname|getaddrinfo|gethostbyname_ex)\b|\bsmtplib\b|\bftplib\b|\baiohttp\b|\bfetch\s*\(|\baxios\b|\bhttps?\.(?:request|get)\s*\(|\bxmlhttprequest\b|\bsendbeacon\b|\bnew\s+websocket\b|\bdns(?:\.promises)?\.(?:resolve\w*|lookup)\s*\(|\bdns\.resolver\.\w+|\bresolver\.(?:resolve|query)\s*\(|\bnet\.lookup\w+\s*\(|\bdns\]::get\w+|\bparamiko\b|\bnet\.(?:connect|createconnection)\b|\bnet\.dial(?:tcp|udp|timeout)?\s*\(|\b(?:tcp|udp)socket\.(?:new|open)\b|\b(?:tcpstream|udpsocket)::(?:connect|bind)\b|\bio::socket::inet\b|\b(?:deno|bun)\.connect(?:tls)?\s*\(|\b(?:got|needle|superagent)\s*[.(]|\binvoke-(?:webrequest|restmethod)\b|\biwr\b|\birm\b|\.upload(?:string|data|file|values)\s*\(|\bresolve-dnsname\b|\bsend-mailmessage\b|\b(?:curl|wget|ncat|socat|nslookup|dig|drill|scp|sftp|telnet|sendmail)\b|\bnc\s|\bhost\s+[\x22\x27]?\$|\bping\s+(?:-\w+\s+(?:\d+\s+)?)*[\x22\x27]?\$|\bgetent\s+hosts\s+[\x22\x27]?\$|\bhttp\.(?:post|postform|newrequest|head|get)\s*\(|\bhttp\.defaultclient\b|\bnet::http\b|\b(?:httparty|faraday|restclient)\b|\.(?:postasync|getasync|sendasync|putasync|uploadstringtaskasync)\s*\(|\bhttpurlconnection\b|\.openconnection\s*\(|\b(?:reqwest|ureq|attohttpc)::|\bcurl_exec\s*\(|\bfile_get_contents\s*\(\s*[\x22\x27]https?:|\burlsession\b|\burlrequest\s*\(|\bokhttpclient\b|\bhttpclient\s*\(\s*\)\s*\.\s*(?:post|send)|\bdblink(?:_connect(?:_u)?|_exec|_send_query)?\s*\(|\butl_(?:http|inaddr|tcp|smtp)\.|\bxp_(?:dirtree|fileexist|subdirs)\b|\bnet\.http_(?:get|post)\s*\(|\bload_file\s*\(\s*concat\s*\(|\.src\s*=[^=]|\blocation(?:\.href)?\s*=[^=]|\bwindow\.open\s*\(",
    )
});

/// Calls whose result is a connection, a session or a client: a later
/// call on it is a network call.
static HANDLE: Lazy = LazyLock::new(|| {
    compile(
        r"\brequests\.session\b|\bhttpx\.(?:async)?client\b|\bsocket\.socket\b|\bsocket\.create_connection\b|\bhttp\.client\.https?connection\b|\bhttps?\.request\s*\(|\bnew\s+websocket\b|\bnew\s+xmlhttprequest\b|\bnet\.(?:connect|createconnection|socket)\b|\bdgram\.createsocket\b|\bnet\.dial(?:tcp|udp|timeout)?\s*\(|\b(?:tcp|udp)socket\.(?:new|open)\b|\b(?:tcpstream|udpsocket)::(?:connect|bind)\b|\bio::socket::inet\b|\b(?:deno|bun)\.connect(?:tls)?\s*\(|\bnet\.webclient\b|\baiohttp\.clientsession\b|\baxios\.create\b|\bsmtplib\.smtp\w*|\bftplib\.ftp(?:_tls)?\b|\bnet\.sockets\.tcpclient\b|\bnew-object\s+(?:system\.)?net\.|\bnew\s+httpclient\s*\(|\bhttpclient\.new(?:builder|httpclient)\s*\(|\breqwest::(?:blocking::)?client::new\b|\bnet::http\.new\b|\b&?http\.client\s*\{",
    )
});

static EXEC: Lazy = LazyLock::new(|| {
    compile(
        r"\bsubprocess\.\w+|\bos\.(?:system|popen|exec\w*|spawn\w*)\b|\b(?:exec|eval)\s*\(|\bchild_process\b|\b(?:execsync|execfilesync|spawnsync|execa)\b|\bspawn\s*\(|\bstart-process\b|\binvoke-expression\b|\biex\b|\bnew\s+function\s*\(|\bpty\.spawn\b|\b(?:ba|z)?sh\s+-c\b|\beval\s|\bcopy\b[^\n]*\bto\s+program\b|\bxp_cmdshell\b",
    )
});

/// A command line that talks to the network, inside an exec sink.
static NETWORK_PROGRAM: Lazy = LazyLock::new(|| {
    compile(
        r"\b(?:curl|wget|nc|ncat|socat|nslookup|dig|scp|sftp|telnet|sendmail|invoke-webrequest|iwr|irm|rclone|pastebinit)\b|\bgh\W+(?:gist|api|release|issue)\b|\baws\W+s3\W+(?:cp|mv|sync)\b|https?://",
    )
});

static FILE: Lazy = LazyLock::new(|| {
    compile(
        r#"\bopen\s*\([^)]*,\s*["'][wax]b?\+?["']|\.write(?:_text|_bytes|lines)?\s*\(|\b(?:writefile|appendfile)(?:sync)?\s*\(|\bout-file\b|\bset-content\b|\badd-content\b|\blogging\.\w+\s*\(|\blog(?:ger)?\.(?:info|debug|warn|warning|error|critical)\s*\("#,
    )
});

static OUTPUT: Lazy = LazyLock::new(|| {
    compile(
        r"\bprint\s*\(|\bconsole\.(?:log|info|warn|error|debug)\b|\bwrite-(?:host|output)\b|\becho\b|\bstdout\.write\b",
    )
});

/// A shell or PowerShell redirection into a file, or `tee`.
static REDIRECT: Lazy = LazyLock::new(|| compile(r#"[^=>-]>>?\s*["']?[~/$\w.]|\btee\b"#));

/// Markup written into a page (`el.innerHTML +=`, `document.write(`).
static MARKUP: Lazy = LazyLock::new(|| {
    compile(r"\.(?:inner|outer)html\s*\+?=|\binsertadjacenthtml\s*\(|\bdocument\.write(?:ln)?\s*\(")
});
/// An element's source URL in markup: the page fetches it as it renders.
static SOURCE_URL: Lazy = LazyLock::new(|| compile(r#"\bsrc\s*=\s*\\?["']?https?://"#));

/// Whether a line writes markup into a page whose element loads a URL
/// (`<img src="https://…?u=${t}">`): a request, which its strings (blank
/// in `view`, present in `code`) say.
pub(super) fn markup_request(view: &str, code: &str) -> bool {
    MARKUP.is_match(view.as_bytes()) && SOURCE_URL.is_match(code.as_bytes())
}

/// The network call on a line of code, as a byte range of `code`.
pub(super) fn network(code: &str) -> Option<std::ops::Range<usize>> {
    NETWORK.find(code.as_bytes()).map(|m| m.range())
}

/// The worst sink on a (joined) line of code; `shell_like`: a shell or
/// PowerShell line, where `>` redirects.
pub(super) fn find(code: &str, shell_like: bool) -> Option<Kind> {
    let b = code.as_bytes();
    if NETWORK.is_match(b) {
        Some(Kind::Network)
    } else if EXEC.is_match(b) {
        Some(Kind::Exec)
    } else if FILE.is_match(b) || shell_like && REDIRECT.is_match(b) {
        Some(Kind::File)
    } else if OUTPUT.is_match(b) {
        Some(Kind::Output)
    } else {
        None
    }
}

/// Whether an assignment's right-hand side makes a network handle.
pub(super) fn makes_handle(rhs: &str) -> bool {
    HANDLE.is_match(rhs.as_bytes())
}

/// Whether the command an exec sink runs talks to the network.
pub(super) fn runs_network_program(code: &str) -> bool {
    NETWORK_PROGRAM.is_match(code.as_bytes())
}

#[cfg(test)]
#[path = "sinks_tests.rs"]
mod sweep_tests;
