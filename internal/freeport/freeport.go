// Package freeport finds a free TCP port on loopback for the servers tests and make chaos start.
package freeport

import "net"

// Loopback returns a port on 127.0.0.1 that nothing listens on now.
func Loopback() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
