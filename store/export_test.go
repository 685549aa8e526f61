package store

// The statements of the mailbox, so the benchmark can time and explain them bare.
var (
	CountMessagesSQL  = countMessagesSQL
	CountMessagesArgs = countMessagesArgs
)
