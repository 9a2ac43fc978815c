package bench

// This file holds what run's errors add when the server cannot be used at all: what to do.

import (
	"errors"
	"net"
	"net/http"

	"github.com/speedmatrix/speedmatrix/bench/server"
)

// authHint is what to do when the server refused a request for want of an API key.
const authHint = "the server wants an API key: export it in a variable and name that variable with --api-key-env (api_key_env in the configuration); if you did, the key is not the server's"

// refusedAuth reports whether err is the server refusing a request as unauthorized (HTTP 401
// or 403): every request of the run would be refused alike.
func refusedAuth(err error) bool {
	var se *server.StatusError
	return errors.As(err, &se) && (se.Status == http.StatusUnauthorized || se.Status == http.StatusForbidden)
}

// unreachHint is what to do when nothing answers at the server's address.
const unreachHint = "nothing answers at that address: start the server, or check --url"

// unreachable reports whether err is a failure to reach the server at all (connection refused,
// no such host): a wrong URL or a server not started, rather than a server that misbehaves.
func unreachable(err error) bool {
	var op *net.OpError
	return errors.As(err, &op)
}
