package rpc

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// ServiceProtocol builds a Protocol from a .proto service descriptor: the methods in impl,
// and for every other rpc of the service a handler that returns unimplemented(method), so
// a known method never gets "no such method". impl may not name methods the service lacks.
func ServiceProtocol(name string, sd protoreflect.ServiceDescriptor, impl map[string]Method, unimplemented func(method string) error) (*Protocol, error) {
	p := &Protocol{Name: name, Version: 1, Methods: map[string]Method{}}
	rpcs := sd.Methods()
	for m := range impl {
		if rpcs.ByName(protoreflect.Name(m)) == nil {
			return nil, fmt.Errorf("rpc: %s has no method %s", sd.FullName(), m)
		}
	}
	for i := 0; i < rpcs.Len(); i++ {
		md := rpcs.Get(i)
		mname := string(md.Name())
		if h, ok := impl[mname]; ok {
			p.Methods[mname] = h
			continue
		}
		mt, err := protoregistry.GlobalTypes.FindMessageByName(md.Input().FullName())
		if err != nil {
			return nil, fmt.Errorf("rpc: request type of %s: %w", mname, err)
		}
		p.Methods[mname] = Method{
			decode: unmarshalAs(mt.Zero().Interface()),
			handle: func(context.Context, any) (proto.Message, error) {
				return nil, unimplemented(mname)
			},
		}
	}
	return p, nil
}
