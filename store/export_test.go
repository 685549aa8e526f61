package store

// GrantArgs are the arguments of a visibility's condition, as its statements send them.
func GrantArgs(vis Visibility) []any {
	_, args := GrantsSQL(vis, "", 1)
	return args
}

// Queued is the number of reads waiting for a statement.
func (r *MessageReader) Queued() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.queue)
}
