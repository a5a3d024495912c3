package rmweb

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/bobbin-yarn/bobbin/rpc"
)

// The Java RM renders its REST resources with Jersey and JAXB: JSON by default, XML when
// the client asks for it (Accept: application/xml), both from the same objects. Bobbin
// builds each answer once as JSON, with the Java RM's field names and order, and derives
// the XML from that JSON: an object is an element per key, a list repeats its key's
// element, which is how JAXB writes the same objects.

// wantsXML reports whether the client prefers XML to JSON.
func wantsXML(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mt := strings.TrimSpace(strings.SplitN(part, ";", 2)[0])
		switch mt {
		case "application/json", "*/*", "application/*":
			return false
		case "application/xml", "text/xml":
			return true
		}
	}
	return false
}

// write sends v (marshalled to JSON; its single top-level key is the XML root) with the
// given status.
func write(w http.ResponseWriter, r *http.Request, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if wantsXML(r) {
		var buf bytes.Buffer
		buf.WriteString(xml.Header)
		if err := jsonToXML(&buf, body); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/xml; charset=utf-8")
		w.WriteHeader(status)
		w.Write(buf.Bytes())
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(body)
}

// jsonToXML converts a JSON document whose top level is an object with one key.
func jsonToXML(w *bytes.Buffer, doc []byte) error {
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	t, err := dec.Token()
	if err != nil {
		return err
	}
	if t != json.Delim('{') {
		return errors.New("rmweb: XML needs a JSON object")
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return err
		}
		if err := xmlValue(w, dec, k.(string)); err != nil {
			return err
		}
	}
	_, err = dec.Token()
	return err
}

// xmlValue writes the next JSON value as element(s) named name.
func xmlValue(w *bytes.Buffer, dec *json.Decoder, name string) error {
	t, err := dec.Token()
	if err != nil {
		return err
	}
	switch v := t.(type) {
	case json.Delim:
		switch v {
		case '{':
			fmt.Fprintf(w, "<%s>", name)
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				if err := xmlValue(w, dec, k.(string)); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil {
				return err
			}
			fmt.Fprintf(w, "</%s>", name)
		case '[':
			for dec.More() {
				if err := xmlValue(w, dec, name); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil {
				return err
			}
		}
	case nil:
		// JAXB leaves a null element out
	default:
		fmt.Fprintf(w, "<%s>", name)
		xml.EscapeText(w, []byte(fmt.Sprint(v)))
		fmt.Fprintf(w, "</%s>", name)
	}
	return nil
}

// remoteException is the Java RM's error body (GenericExceptionHandler).
type remoteException struct {
	Exception     string `json:"exception"`
	Message       string `json:"message,omitempty"`
	JavaClassName string `json:"javaClassName"`
}

// Java exception classes of the REST errors.
const (
	classNotFound     = "org.apache.hadoop.yarn.webapp.NotFoundException"
	classBadRequest   = "org.apache.hadoop.yarn.webapp.BadRequestException"
	classForbidden    = "org.apache.hadoop.yarn.webapp.ForbiddenException"
	classAuthz        = "org.apache.hadoop.security.authorize.AuthorizationException"
	classYarn         = "org.apache.hadoop.yarn.exceptions.YarnException"
	classWebAppExcept = "javax.ws.rs.WebApplicationException"
)

// statusOf is GenericExceptionHandler's mapping of exception classes to HTTP statuses.
var statusOf = map[string]int{
	classNotFound: http.StatusNotFound, classBadRequest: http.StatusBadRequest, classForbidden: http.StatusForbidden,
	classAuthz: http.StatusUnauthorized, classWebAppExcept: http.StatusBadRequest,
	"java.lang.IllegalArgumentException": http.StatusBadRequest, "java.lang.NumberFormatException": http.StatusBadRequest,
}

// webError is an error answered as a RemoteException.
type webError struct {
	class, msg string
}

func (e *webError) Error() string { return e.msg }

// notFound, badRequest and forbidden build the YARN webapp exceptions; their messages
// carry the "java.lang.Exception: " the Java classes add when built from a string.
func notFound(format string, args ...any) *webError {
	return &webError{classNotFound, "java.lang.Exception: " + fmt.Sprintf(format, args...)}
}

func badRequest(format string, args ...any) *webError {
	return &webError{classBadRequest, "java.lang.Exception: " + fmt.Sprintf(format, args...)}
}

func forbidden(format string, args ...any) *webError {
	return &webError{classForbidden, "java.lang.Exception: " + fmt.Sprintf(format, args...)}
}

// writeError answers err as the Java RM's RemoteException JSON (or XML).
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	var we *webError
	if !errors.As(err, &we) {
		we = &webError{classYarn, err.Error()}
	}
	status, ok := statusOf[we.class]
	if !ok {
		status = http.StatusInternalServerError
	}
	simple := we.class[strings.LastIndexByte(we.class, '.')+1:]
	write(w, r, status, map[string]any{"RemoteException": remoteException{Exception: simple, Message: we.msg, JavaClassName: we.class}})
}

// fromRPC answers an RPC-layer error (rmcore's, shared with the RPC services) with the
// same Java class over REST.
func fromRPC(err error) error {
	var re *rpc.RemoteError
	if errors.As(err, &re) {
		return &webError{re.Class, re.Message}
	}
	return err
}

// readJSON decodes a request body of at most 1 MiB into v; malformed input is a 400.
func readJSON(r *http.Request, v any) error {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20+1))
	if err != nil {
		return &webError{classWebAppExcept, "reading the request body: " + err.Error()}
	}
	if len(body) > 1<<20 {
		return &webError{classWebAppExcept, "request body larger than 1 MiB"}
	}
	if strings.Contains(r.Header.Get("Content-Type"), "xml") {
		if err := xml.Unmarshal(body, v); err != nil {
			return &webError{classWebAppExcept, "javax.xml.bind.UnmarshalException: " + err.Error()}
		}
		return nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		return &webError{classWebAppExcept, "javax.xml.bind.UnmarshalException: " + err.Error()}
	}
	return nil
}
