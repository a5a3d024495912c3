// Package webapp is what the daemons' web servers share: Hadoop's REST rendering (JSON by
// default, XML on request, from the same objects) and its RemoteException errors, as the
// Java daemons' Jersey resources answer.
package webapp

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

// WantsXML reports whether the client prefers XML to JSON.
func WantsXML(r *http.Request) bool {
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

// Write sends v (marshalled to JSON; its single top-level key is the XML root) with the
// given status.
func Write(w http.ResponseWriter, r *http.Request, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	if WantsXML(r) {
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
		return errors.New("webapp: XML needs a JSON object")
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
	ClassNotFound        = "org.apache.hadoop.yarn.webapp.NotFoundException"
	ClassBadRequest      = "org.apache.hadoop.yarn.webapp.BadRequestException"
	ClassForbidden       = "org.apache.hadoop.yarn.webapp.ForbiddenException"
	ClassAuthz           = "org.apache.hadoop.security.authorize.AuthorizationException"
	ClassYarn            = "org.apache.hadoop.yarn.exceptions.YarnException"
	ClassWebAppException = "javax.ws.rs.WebApplicationException"
)

// statusOf is GenericExceptionHandler's mapping of exception classes to HTTP statuses.
var statusOf = map[string]int{
	ClassNotFound: http.StatusNotFound, ClassBadRequest: http.StatusBadRequest, ClassForbidden: http.StatusForbidden,
	ClassAuthz: http.StatusUnauthorized, ClassWebAppException: http.StatusBadRequest,
	"java.lang.IllegalArgumentException": http.StatusBadRequest, "java.lang.NumberFormatException": http.StatusBadRequest,
}

// Error is an error answered as a RemoteException.
type Error struct {
	Class, Msg string
}

func (e *Error) Error() string { return e.Msg }

// NotFound, BadRequest and Forbidden build the YARN webapp exceptions; their messages
// carry the "java.lang.Exception: " the Java classes add when built from a string.
func NotFound(format string, args ...any) *Error {
	return &Error{ClassNotFound, "java.lang.Exception: " + fmt.Sprintf(format, args...)}
}

func BadRequest(format string, args ...any) *Error {
	return &Error{ClassBadRequest, "java.lang.Exception: " + fmt.Sprintf(format, args...)}
}

// WriteError answers err as the Java RM's RemoteException JSON (or XML).
func WriteError(w http.ResponseWriter, r *http.Request, err error) {
	var we *Error
	if !errors.As(err, &we) {
		we = &Error{ClassYarn, err.Error()}
	}
	status, ok := statusOf[we.Class]
	if !ok {
		status = http.StatusInternalServerError
	}
	simple := we.Class[strings.LastIndexByte(we.Class, '.')+1:]
	Write(w, r, status, map[string]any{"RemoteException": remoteException{Exception: simple, Message: we.Msg, JavaClassName: we.Class}})
}

// FromRPC answers an error that names a Java class — rmcore's (yarn/exceptions, shared
// with the RPC services), or one an RPC peer sent — with the same class over REST.
func FromRPC(err error) error {
	var re *rpc.RemoteError
	if errors.As(err, &re) {
		return &Error{re.Class, re.Message}
	}
	var je rpc.JavaException
	if errors.As(err, &je) {
		return &Error{je.JavaClass(), je.JavaMessage()}
	}
	return err
}

// ReadJSON decodes a request body of at most 1 MiB into v; malformed input is a 400.
func ReadJSON(r *http.Request, v any) error {
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20+1))
	if err != nil {
		return &Error{ClassWebAppException, "reading the request body: " + err.Error()}
	}
	if len(body) > 1<<20 {
		return &Error{ClassWebAppException, "request body larger than 1 MiB"}
	}
	if strings.Contains(r.Header.Get("Content-Type"), "xml") {
		if err := xml.Unmarshal(body, v); err != nil {
			return &Error{ClassWebAppException, "javax.xml.bind.UnmarshalException: " + err.Error()}
		}
		return nil
	}
	if err := json.Unmarshal(body, v); err != nil {
		return &Error{ClassWebAppException, "javax.xml.bind.UnmarshalException: " + err.Error()}
	}
	return nil
}
