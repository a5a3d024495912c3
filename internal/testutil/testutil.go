// Package testutil holds helpers the packages' tests share.
package testutil

import (
	"io"

	"github.com/sirupsen/logrus"
)

// QuietLogger is a logger that discards everything, for daemons started by tests.
func QuietLogger() *logrus.Entry {
	l := logrus.New()
	l.SetOutput(io.Discard)
	return logrus.NewEntry(l)
}
