package connkeep

import (
	"encoding/binary"
	"errors"
	"sync/atomic"
	"unsafe"

	"github.com/bobbin-yarn/bobbin/rpc"
)

// The slot table is a memfd the keeper creates and every attached server maps: one
// fixed-size slot per kept connection, written by the server as it works and read by the
// next server after a crash. Memory writes to a shared mapping outlive a SIGKILL of the
// writer, so the table says exactly what the dead process was doing with each connection.
//
// Slot layout (little endian):
//
//	0   established uint32  1 once the handshake is done and the state below is written
//	4   reading     uint32  1 from before a byte is taken from the socket until every
//	                        byte read belongs to a handled frame
//	8   calls       uint32  calls read and not yet answered; the top bit is set while an
//	                        answer is being written (cleared with the count, in one step)
//	12  stateLen    uint32
//	16  state       encoded rpc.ConnState
//	... base        uint32  what the socket had sent when it was kept (see sentBySocket)
//	... sent        uint32  bytes the servers wrote to the socket since (mod 2^32)
//	... answerEnd   uint32  sent once the answer being written is out
//
// A process can be killed after an answer is written and before it is counted (the
// client already has it); the next process then finds the answering bit and asks the
// kernel how much the socket was given: answerEnd means the answer went out whole.
const (
	slotSize     = 1024
	slotCount    = 65536 // 64 MiB of address space; only the slots used take memory
	tableSize    = slotSize * slotCount
	offEstab     = 0
	offReading   = 4
	offCalls     = 8
	offLen       = 12
	offState     = 16
	offBase      = slotSize - 12
	offSent      = slotSize - 8
	offAnswerEnd = slotSize - 4
	maxState     = offBase - offState
	answeringBit = 1 << 31
)

type table []byte

func (t table) word(slot, off int) *uint32 {
	return (*uint32)(unsafe.Pointer(&t[slot*slotSize+off]))
}

// reset clears a slot before a new connection uses it; base is what its socket had sent.
func (t table) reset(slot int, base uint32) {
	atomic.StoreUint32(t.word(slot, offEstab), 0)
	atomic.StoreUint32(t.word(slot, offReading), 0)
	atomic.StoreUint32(t.word(slot, offCalls), 0)
	atomic.StoreUint32(t.word(slot, offBase), base)
	atomic.StoreUint32(t.word(slot, offSent), 0)
	atomic.StoreUint32(t.word(slot, offAnswerEnd), 0)
}

// writing records that n bytes are about to be written; answer: they answer a call.
func (t table) writing(slot, n int, answer bool) {
	if !answer {
		return
	}
	atomic.StoreUint32(t.word(slot, offAnswerEnd), atomic.LoadUint32(t.word(slot, offSent))+uint32(n))
	atomic.OrUint32(t.word(slot, offCalls), answeringBit)
}

// written counts n bytes written; an answer's call is counted answered in the same step
// that clears the answering bit.
func (t table) written(slot, n int, answer bool) {
	sent := t.word(slot, offSent)
	atomic.StoreUint32(sent, atomic.LoadUint32(sent)+uint32(n))
	if answer {
		atomic.AddUint32(t.word(slot, offCalls), ^uint32(answeringBit)) // -(answeringBit+1)
	}
}

// resumable reports whether the connection in slot can be taken over, and its state.
// socketSent is what the socket has been given since it was accepted, as the kernel
// counts it (plus the slot's base).
func (t table) resumable(slot int, socketSent func() (uint32, error)) (server string, st rpc.ConnState, ok bool) {
	if atomic.LoadUint32(t.word(slot, offEstab)) != 1 || atomic.LoadUint32(t.word(slot, offReading)) != 0 {
		return "", rpc.ConnState{}, false
	}
	got, err := socketSent()
	if err != nil {
		return "", rpc.ConnState{}, false
	}
	got -= atomic.LoadUint32(t.word(slot, offBase))
	calls := atomic.LoadUint32(t.word(slot, offCalls))
	if calls&answeringBit != 0 {
		end := atomic.LoadUint32(t.word(slot, offAnswerEnd))
		if got != end || calls&^answeringBit == 0 {
			return "", rpc.ConnState{}, false // the answer is not (all) out: the call is lost
		}
		// The answer went out whole; the dead process did not get to count it.
		calls = calls&^answeringBit - 1
		atomic.StoreUint32(t.word(slot, offSent), end)
		atomic.StoreUint32(t.word(slot, offCalls), calls)
	}
	if calls != 0 || got != atomic.LoadUint32(t.word(slot, offSent)) {
		return "", rpc.ConnState{}, false
	}
	n := int(atomic.LoadUint32(t.word(slot, offLen)))
	if n > maxState {
		return "", rpc.ConnState{}, false
	}
	base := slot*slotSize + offState
	server, st, err = decodeState(t[base : base+n])
	if err != nil {
		return "", rpc.ConnState{}, false
	}
	return server, st, true
}

// establish writes the state, then marks the slot established; false when it does not fit.
func (t table) establish(slot int, server string, st rpc.ConnState) bool {
	b := encodeState(server, st)
	if len(b) > maxState {
		return false
	}
	base := slot*slotSize + offState
	copy(t[base:], b)
	atomic.StoreUint32(t.word(slot, offLen), uint32(len(b)))
	atomic.StoreUint32(t.word(slot, offEstab), 1)
	return true
}

// stateVersion 2: the slot counts bytes written (a version-1 table, from a keeper an
// older binary started, is not read: its connections are closed, not misread).
const stateVersion = 2

func encodeState(server string, st rpc.ConnState) []byte {
	b := []byte{stateVersion, 0}
	if st.SASL {
		b[1] = 1
	}
	for _, f := range [][]byte{[]byte(server), []byte(st.Auth), []byte(st.User), []byte(st.RealUser), []byte(st.TokenKind), st.TokenID, []byte(st.Protocol)} {
		b = binary.AppendUvarint(b, uint64(len(f)))
		b = append(b, f...)
	}
	return b
}

var errBadState = errors.New("connkeep: bad connection state")

func decodeState(b []byte) (server string, st rpc.ConnState, err error) {
	if len(b) < 2 || b[0] != stateVersion {
		return "", rpc.ConnState{}, errBadState
	}
	st.SASL = b[1] == 1
	b = b[2:]
	var fields [7][]byte
	for i := range fields {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return "", rpc.ConnState{}, errBadState
		}
		fields[i] = b[k : k+int(n)]
		b = b[k+int(n):]
	}
	server = string(fields[0])
	st.Auth, st.User, st.RealUser, st.TokenKind = rpc.AuthMethod(fields[1]), string(fields[2]), string(fields[3]), string(fields[4])
	if len(fields[5]) > 0 {
		st.TokenID = append([]byte(nil), fields[5]...)
	}
	st.Protocol = string(fields[6])
	return server, st, nil
}
