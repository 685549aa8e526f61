package store

// The statements of the mailbox, so the benchmark can time and explain them bare.
var (
	ListMessagesSQL   = listMessagesSQL
	CountMessagesSQL  = countMessagesSQL
	CountMessagesArgs = countMessagesArgs
)
