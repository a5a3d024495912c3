package rmcore

import (
	"strings"

	"github.com/bobbin-yarn/bobbin/conf/capacity"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/yarn/exceptions"
)

// CheckLabels validates the node-label expressions of requests to queue, as the Java RM
// does at submission (the AM's request) and in allocate (SchedulerUtils.
// normalizeAndValidateRequest, in its order), with the same words and exception class, so
// that a request the cluster cannot serve fails at once instead of waiting for ever. An
// ANY request without an expression is checked with the one it inherits (inherited: the
// submission's, else the queue's default-node-label-expression); an unknown queue is left
// to the caller.
func (rm *Core) CheckLabels(queue string, reqs []*yarnpb.ResourceRequestProto, inherited *string) error {
	if len(reqs) == 0 {
		return nil // most allocate calls ask for nothing new
	}
	q, ok := rm.Queues().Queue(queue)
	if !ok {
		return nil
	}
	for _, r := range reqs {
		expr := r.NodeLabelExpression
		if expr == nil && r.GetResourceName() == "*" {
			expr = inherited
			if expr == nil {
				expr = &q.DefaultNodeLabelExpression
			}
		}
		if err := rm.checkLabel(q, r.GetResourceName(), strings.TrimSpace(deref(expr))); err != nil {
			return err
		}
	}
	return nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// checkLabel is one request's checks (SchedulerUtils.validateResourceRequest).
func (rm *Core) checkLabel(q *capacity.Queue, resourceName, expr string) error {
	if expr == "" {
		return nil
	}
	refuse := func(format string, args ...any) error {
		return exceptions.Errorf(exceptions.InvalidLabelResourceRequest, format, args...)
	}
	switch {
	case !rm.settings.NodeLabels:
		return refuse("Invalid resource request, node label not enabled but request contains label expression")
	case resourceName != "*":
		return refuse("Invalid resource request, queue=%s specified node label expression in a resource request has resource name = %s", q.Name, resourceName)
	case strings.Contains(expr, "&&"):
		return refuse("Invalid resource request, queue=%s specified more than one node label in a node label expression, node label expression = %s", q.Name, expr)
	}
	if !q.CanAccess(expr) {
		return refuse("Invalid resource request, queue=%s doesn't have permission to access all labels in resource request. labelExpression of resource request=%s. Queue labels=%s",
			q.Name, expr, strings.Join(q.AccessibleNodeLabels, ","))
	}
	if !rm.labels.Exists(expr) {
		return refuse("Invalid label resource request, cluster do not contain , label= %s", expr)
	}
	return nil
}
