package formtask

import (
	"context"
	"fmt"
	"slices"
)

// RenderFormPrint stores the print of one form of a message, with the message's header and without its
// attachments, and returns its digest (hex). The same form renders once. A form that is no longer on the
// message is ErrContentGone.
func (a *Activities) RenderFormPrint(ctx context.Context, in FormPrintInput) (PrintResult, error) {
	return a.renderContent(ctx, in.MessageID, func(forms []FormContent, _ []AttachmentInfo) ([]FormContent, []AttachmentInfo, error) {
		i := slices.IndexFunc(forms, func(f FormContent) bool { return f.ID == in.FormID })
		if i < 0 {
			return nil, nil, permanent(ErrContentGone, fmt.Errorf("form %d is not on message %s", in.FormID, in.MessageID))
		}
		return forms[i : i+1], nil, nil
	})
}
