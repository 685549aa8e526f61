package store

// The statements of the mailbox, so the benchmark can time and explain them bare.
var (
	CountMessagesSQL  = countMessagesSQL
	CountMessagesArgs = countMessagesArgs
)

// GrantArgs are the arguments of a visibility's condition, as its statements send them.
func GrantArgs(vis Visibility) []any {
	_, args := grantsSQL(vis, "", 1)
	return args
}
