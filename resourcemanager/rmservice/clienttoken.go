package rmservice

import (
	"context"

	"google.golang.org/protobuf/proto"

	commonpb "github.com/bobbin-yarn/bobbin/hadoop-proto/common"
	yarnpb "github.com/bobbin-yarn/bobbin/hadoop-proto/yarn"
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/rpc"
	"github.com/bobbin-yarn/bobbin/rpc/token"
)

// KindClientToAM is the kind of client-to-AM tokens.
const KindClientToAM = "YARN_CLIENT_TOKEN"

// addClientTokens gives each report the caller may view a client-to-AM token for the
// current attempt, as the Java RM's createAndGetApplicationReport does in secure mode: the
// identifier names the attempt and the caller's full name, the password is HmacSHA1 with
// the attempt's key, the service is left for the client to fill in (the AM's address).
// The MapReduce job client needs it to talk to its AM on a kerberized cluster.
func (s *clientService) addClientTokens(ctx context.Context, reports ...*yarnpb.ApplicationReportProto) {
	if !s.rm.Settings().Kerberos {
		return
	}
	caller, _ := rpc.CallerFrom(ctx)
	if caller == nil {
		return
	}
	for _, r := range reports {
		id := records.AppIDFromProto(r.GetApplicationId())
		if s.rm.Settings().ACLEnabled && !s.rm.MayViewApp(caller.User, id) {
			continue
		}
		att, key := s.rm.ClientKey(id)
		if key == nil {
			continue
		}
		ident, err := proto.Marshal(&yarnpb.ClientToAMTokenIdentifierProto{AppAttemptId: att.Proto(), ClientName: proto.String(fullName(caller))})
		if err != nil {
			continue
		}
		r.ClientToAmToken = &commonpb.TokenProto{Identifier: ident, Password: token.Password(key, ident),
			Kind: proto.String(KindClientToAM), Service: proto.String("")}
	}
}
