//! What a PostgreSQL error means for the request that met it
//! (`store::hub::fault`), read off errors a real server and the real client
//! library raise: a connection that fails may be retried (503), a value the
//! request carried is the client's (422), and a statement the hub's own
//! code got wrong — a type, a column, a parameter count — is the hub's bug
//! (500), which no retry changes.

use ecp_node::store::hub::{Fault, fault};

use crate::pg::start_or_skip;

#[tokio::test(flavor = "multi_thread")]
async fn each_error_is_answered_as_what_it_means() {
    let Some(pg) = start_or_skip("each_error_is_answered_as_what_it_means") else { return };
    pg.with("postgres", |client| {
        let wrong_type = client.query_one("SELECT $1::int4", &[&"seven"]).expect_err("text for an int4");
        let wrong_column_type = client
            .query_one("SELECT 7::int4", &[])
            .expect("one row")
            .try_get::<_, String>(0)
            .expect_err("an int4 read as text");
        let no_such_column = client
            .query_one("SELECT 7::int4 AS n", &[])
            .expect("one row")
            .try_get::<_, i32>("m")
            .expect_err("no m");
        let parameters = client.query("SELECT $1::int4", &[]).expect_err("one parameter, none given");
        let rows = client.query_one("SELECT 1 WHERE false", &[]).expect_err("no row for query_one");
        let nul = client.query("SELECT 1 -- \0", &[]).expect_err("a statement holding a NUL byte");
        for (what, e) in [
            ("a parameter of the wrong type", wrong_type),
            ("a column of the wrong type", wrong_column_type),
            ("a column the row does not have", no_such_column),
            ("too few parameters", parameters),
            ("no row for query_one", rows),
            ("a statement the protocol cannot carry", nul),
        ] {
            assert_eq!(fault(&e), Fault::Internal, "{what}: {e}");
        }

        let division = client.query_one("SELECT 1 / 0", &[]).expect_err("a division by zero");
        assert_eq!(fault(&division), Fault::Input, "{division}");
        let missing = client.query_one("SELECT * FROM no_such_table", &[]).expect_err("no table");
        assert_eq!(fault(&missing), Fault::Internal, "{missing}");

        // A connection the server ends: the request may be sent again.
        let mut victim = postgres::Client::connect(&pg.url("postgres"), postgres::NoTls).expect("connects");
        let pid: i32 = victim.query_one("SELECT pg_backend_pid()", &[]).expect("its pid").get(0);
        client.execute("SELECT pg_terminate_backend($1)", &[&pid]).expect("terminated");
        let cut = victim.query_one("SELECT 1", &[]).expect_err("the connection was ended");
        assert_eq!(fault(&cut), Fault::Retry, "{cut}");
    });
    // No server at all: likewise.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
        listener.local_addr().expect("its address").port()
    };
    let refused = tokio::task::block_in_place(|| {
        postgres::Client::connect(&format!("postgres://ecp@127.0.0.1:{port}/postgres"), postgres::NoTls)
            .err()
            .expect("nothing listens there")
    });
    assert_eq!(fault(&refused), Fault::Retry, "{refused}");
}
