package token

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
)

func TestSignerMatchesPasswordUnderConcurrency(t *testing.T) {
	key := []byte("0123456789abcdefghij")
	s := NewSigner(key)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				id := []byte(fmt.Sprintf("identifier-%d-%d", g, i))
				if got, want := s.Password(id), Password(key, id); !bytes.Equal(got, want) {
					t.Errorf("%s: signer %x, Password %x", id, got, want)
					return
				}
			}
		}()
	}
	wg.Wait()
}

func BenchmarkPassword(b *testing.B) {
	key, id := []byte("0123456789abcdefghij"), bytes.Repeat([]byte{7}, 120)
	b.Run("fresh", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Password(key, id)
		}
	})
	b.Run("signer", func(b *testing.B) {
		s := NewSigner(key)
		b.ReportAllocs()
		for b.Loop() {
			s.Password(id)
		}
	})
}
