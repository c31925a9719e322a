package guest

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"time"
)

// HTTP makes HTTP requests through the host, which allows only the hosts the component's
// capabilities grant (allowed_hosts). The host sends the request; the guest has no sockets.
var HTTP HTTPClient

// HTTPClient is the type of HTTP.
type HTTPClient struct{}

// HTTPRequest is an HTTP request for HTTP.Do.
type HTTPRequest struct {
	// Method defaults to GET.
	Method string
	URL    string
	// Headers are sent as given, one value each.
	Headers map[string]string
	Body    []byte
	// Timeout bounds the whole exchange; zero leaves it to the host.
	Timeout time.Duration
}

// HTTPResponse is the answer to an HTTPRequest. Any status is a response, not an error.
type HTTPResponse struct {
	Status int
	// Headers maps each header name to its value; several values of one header are joined with
	// ", ". Use Header to look one up regardless of case.
	Headers map[string]string
	Body    []byte
}

// Header returns the value of the header name, matched case-insensitively; "" when absent.
func (r *HTTPResponse) Header(name string) string { return lookupHeader(r.Headers, name) }

// SandboxError is returned when the host refused a request that the component's capabilities do
// not allow. The attempt fails with sandbox_violation whatever the handler returns; returning
// the error (a fatal one) is the plain way to unwind.
type SandboxError struct{ Message string }

func (e *SandboxError) Error() string { return "sandbox violation: " + e.Message }

// NetworkError is returned when the request could not be completed: DNS, connection, TLS,
// timeout. Returned from a handler, it is retryable like any plain error.
type NetworkError struct {
	// Kind is the host's error kind ("network", or one a newer host added).
	Kind    string
	Message string
}

func (e *NetworkError) Error() string { return "http: " + e.Message }

// Do sends req and returns the response, a *SandboxError or a *NetworkError.
func (HTTPClient) Do(req HTTPRequest) (*HTTPResponse, error) {
	method := req.Method
	if method == "" {
		method = "GET"
	}
	wire := httpRequestJSON{
		Method:    method,
		URL:       req.URL,
		Headers:   req.Headers,
		TimeoutMS: max(req.Timeout, 0).Milliseconds(),
	}
	if len(req.Body) > 0 {
		wire.BodyBase64 = base64.StdEncoding.EncodeToString(req.Body)
	}
	data, err := json.Marshal(wire)
	if err != nil {
		return nil, errors.New("http: encode request: " + err.Error())
	}
	out, ok := hostHTTPRequest(data)
	if !ok {
		return nil, &NetworkError{Kind: "network", Message: "the host answered nothing"}
	}
	var resp httpResponseJSON
	if err := json.Unmarshal(out, &resp); err != nil {
		return nil, errors.New("http: malformed answer from the host: " + err.Error())
	}
	if resp.Error != "" || resp.Kind != "" {
		if resp.Kind == "sandbox_violation" {
			return nil, &SandboxError{Message: resp.Error}
		}
		return nil, &NetworkError{Kind: resp.Kind, Message: resp.Error}
	}
	body, err := decodeBase64(resp.BodyBase64)
	if err != nil {
		return nil, errors.New("http: malformed body_base64 from the host: " + err.Error())
	}
	if body == nil {
		body = []byte{}
	}
	h := map[string]string(resp.Headers)
	if h == nil {
		h = map[string]string{}
	}
	return &HTTPResponse{Status: resp.Status, Headers: h, Body: body}, nil
}

// Get is Do with method GET.
func (c HTTPClient) Get(url string) (*HTTPResponse, error) {
	return c.Do(HTTPRequest{Method: "GET", URL: url})
}

// Post is Do with method POST, body and its Content-Type.
func (c HTTPClient) Post(url, contentType string, body []byte) (*HTTPResponse, error) {
	return c.Do(HTTPRequest{Method: "POST", URL: url, Headers: map[string]string{"Content-Type": contentType}, Body: body})
}

// httpRequestJSON is the http_request import's argument.
type httpRequestJSON struct {
	Method     string            `json:"method"`
	URL        string            `json:"url"`
	Headers    map[string]string `json:"headers,omitempty"`
	BodyBase64 string            `json:"body_base64,omitempty"`
	TimeoutMS  int64             `json:"timeout_ms,omitempty"`
}

// httpResponseJSON is the http_request import's answer: a response or an error.
type httpResponseJSON struct {
	Status     int         `json:"status"`
	Headers    headersJSON `json:"headers"`
	BodyBase64 string      `json:"body_base64"`
	Error      string      `json:"error"`
	Kind       string      `json:"kind"`
}
