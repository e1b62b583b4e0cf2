package server

import (
	"context"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// unimplemented answers every protocol.Server method zot does not serve
// (an embedded nil protocol.Server would panic instead). Requests get
// MethodNotFound; notifications are ignored. *Server overrides the ones it
// implements; initialize, shutdown, exit and didChange never get here
// (handler.go answers them).
type unimplemented struct{}

var _ protocol.Server = (*Server)(nil)

func notServed(method string) error {
	return rpcError(jsonrpc2.MethodNotFound, "zot lsp does not implement %s", method)
}

func (unimplemented) Initialize(_ context.Context, _ *protocol.InitializeParams) (*protocol.InitializeResult, error) {
	return nil, notServed("Initialize")
}

func (unimplemented) Initialized(_ context.Context, _ *protocol.InitializedParams) error { return nil }

func (unimplemented) Shutdown(_ context.Context) error { return nil }

func (unimplemented) Exit(_ context.Context) error { return nil }

func (unimplemented) WorkDoneProgressCancel(_ context.Context, _ *protocol.WorkDoneProgressCancelParams) error {
	return nil
}

func (unimplemented) LogTrace(_ context.Context, _ *protocol.LogTraceParams) error { return nil }

func (unimplemented) SetTrace(_ context.Context, _ *protocol.SetTraceParams) error { return nil }

func (unimplemented) CodeAction(_ context.Context, _ *protocol.CodeActionParams) ([]protocol.CodeAction, error) {
	return nil, notServed("CodeAction")
}

func (unimplemented) CodeLens(_ context.Context, _ *protocol.CodeLensParams) ([]protocol.CodeLens, error) {
	return nil, notServed("CodeLens")
}

func (unimplemented) CodeLensResolve(_ context.Context, _ *protocol.CodeLens) (*protocol.CodeLens, error) {
	return nil, notServed("CodeLensResolve")
}

func (unimplemented) ColorPresentation(_ context.Context, _ *protocol.ColorPresentationParams) ([]protocol.ColorPresentation, error) {
	return nil, notServed("ColorPresentation")
}

func (unimplemented) Completion(_ context.Context, _ *protocol.CompletionParams) (*protocol.CompletionList, error) {
	return nil, notServed("Completion")
}

func (unimplemented) CompletionResolve(_ context.Context, _ *protocol.CompletionItem) (*protocol.CompletionItem, error) {
	return nil, notServed("CompletionResolve")
}

func (unimplemented) Declaration(_ context.Context, _ *protocol.DeclarationParams) ([]protocol.Location, error) {
	return nil, notServed("Declaration")
}

func (unimplemented) Definition(_ context.Context, _ *protocol.DefinitionParams) ([]protocol.Location, error) {
	return nil, notServed("Definition")
}

func (unimplemented) DidChange(_ context.Context, _ *protocol.DidChangeTextDocumentParams) error {
	return nil
}

func (unimplemented) DidChangeConfiguration(_ context.Context, _ *protocol.DidChangeConfigurationParams) error {
	return nil
}

func (unimplemented) DidChangeWatchedFiles(_ context.Context, _ *protocol.DidChangeWatchedFilesParams) error {
	return nil
}

func (unimplemented) DidChangeWorkspaceFolders(_ context.Context, _ *protocol.DidChangeWorkspaceFoldersParams) error {
	return nil
}

func (unimplemented) DidClose(_ context.Context, _ *protocol.DidCloseTextDocumentParams) error {
	return nil
}

func (unimplemented) DidOpen(_ context.Context, _ *protocol.DidOpenTextDocumentParams) error {
	return nil
}

func (unimplemented) DidSave(_ context.Context, _ *protocol.DidSaveTextDocumentParams) error {
	return nil
}

func (unimplemented) DocumentColor(_ context.Context, _ *protocol.DocumentColorParams) ([]protocol.ColorInformation, error) {
	return nil, notServed("DocumentColor")
}

func (unimplemented) DocumentHighlight(_ context.Context, _ *protocol.DocumentHighlightParams) ([]protocol.DocumentHighlight, error) {
	return nil, notServed("DocumentHighlight")
}

func (unimplemented) DocumentLink(_ context.Context, _ *protocol.DocumentLinkParams) ([]protocol.DocumentLink, error) {
	return nil, notServed("DocumentLink")
}

func (unimplemented) DocumentLinkResolve(_ context.Context, _ *protocol.DocumentLink) (*protocol.DocumentLink, error) {
	return nil, notServed("DocumentLinkResolve")
}

func (unimplemented) DocumentSymbol(_ context.Context, _ *protocol.DocumentSymbolParams) ([]interface{}, error) {
	return nil, notServed("DocumentSymbol")
}

func (unimplemented) ExecuteCommand(_ context.Context, _ *protocol.ExecuteCommandParams) (interface{}, error) {
	return nil, notServed("ExecuteCommand")
}

func (unimplemented) FoldingRanges(_ context.Context, _ *protocol.FoldingRangeParams) ([]protocol.FoldingRange, error) {
	return nil, notServed("FoldingRanges")
}

func (unimplemented) Formatting(_ context.Context, _ *protocol.DocumentFormattingParams) ([]protocol.TextEdit, error) {
	return nil, notServed("Formatting")
}

func (unimplemented) Hover(_ context.Context, _ *protocol.HoverParams) (*protocol.Hover, error) {
	return nil, notServed("Hover")
}

func (unimplemented) Implementation(_ context.Context, _ *protocol.ImplementationParams) ([]protocol.Location, error) {
	return nil, notServed("Implementation")
}

func (unimplemented) OnTypeFormatting(_ context.Context, _ *protocol.DocumentOnTypeFormattingParams) ([]protocol.TextEdit, error) {
	return nil, notServed("OnTypeFormatting")
}

func (unimplemented) PrepareRename(_ context.Context, _ *protocol.PrepareRenameParams) (*protocol.Range, error) {
	return nil, notServed("PrepareRename")
}

func (unimplemented) RangeFormatting(_ context.Context, _ *protocol.DocumentRangeFormattingParams) ([]protocol.TextEdit, error) {
	return nil, notServed("RangeFormatting")
}

func (unimplemented) References(_ context.Context, _ *protocol.ReferenceParams) ([]protocol.Location, error) {
	return nil, notServed("References")
}

func (unimplemented) Rename(_ context.Context, _ *protocol.RenameParams) (*protocol.WorkspaceEdit, error) {
	return nil, notServed("Rename")
}

func (unimplemented) SignatureHelp(_ context.Context, _ *protocol.SignatureHelpParams) (*protocol.SignatureHelp, error) {
	return nil, notServed("SignatureHelp")
}

func (unimplemented) Symbols(_ context.Context, _ *protocol.WorkspaceSymbolParams) ([]protocol.SymbolInformation, error) {
	return nil, notServed("Symbols")
}

func (unimplemented) TypeDefinition(_ context.Context, _ *protocol.TypeDefinitionParams) ([]protocol.Location, error) {
	return nil, notServed("TypeDefinition")
}

func (unimplemented) WillSave(_ context.Context, _ *protocol.WillSaveTextDocumentParams) error {
	return nil
}

func (unimplemented) WillSaveWaitUntil(_ context.Context, _ *protocol.WillSaveTextDocumentParams) ([]protocol.TextEdit, error) {
	return nil, notServed("WillSaveWaitUntil")
}

func (unimplemented) ShowDocument(_ context.Context, _ *protocol.ShowDocumentParams) (*protocol.ShowDocumentResult, error) {
	return nil, notServed("ShowDocument")
}

func (unimplemented) WillCreateFiles(_ context.Context, _ *protocol.CreateFilesParams) (*protocol.WorkspaceEdit, error) {
	return nil, notServed("WillCreateFiles")
}

func (unimplemented) DidCreateFiles(_ context.Context, _ *protocol.CreateFilesParams) error {
	return nil
}

func (unimplemented) WillRenameFiles(_ context.Context, _ *protocol.RenameFilesParams) (*protocol.WorkspaceEdit, error) {
	return nil, notServed("WillRenameFiles")
}

func (unimplemented) DidRenameFiles(_ context.Context, _ *protocol.RenameFilesParams) error {
	return nil
}

func (unimplemented) WillDeleteFiles(_ context.Context, _ *protocol.DeleteFilesParams) (*protocol.WorkspaceEdit, error) {
	return nil, notServed("WillDeleteFiles")
}

func (unimplemented) DidDeleteFiles(_ context.Context, _ *protocol.DeleteFilesParams) error {
	return nil
}

func (unimplemented) CodeLensRefresh(_ context.Context) error { return nil }

func (unimplemented) PrepareCallHierarchy(_ context.Context, _ *protocol.CallHierarchyPrepareParams) ([]protocol.CallHierarchyItem, error) {
	return nil, notServed("PrepareCallHierarchy")
}

func (unimplemented) IncomingCalls(_ context.Context, _ *protocol.CallHierarchyIncomingCallsParams) ([]protocol.CallHierarchyIncomingCall, error) {
	return nil, notServed("IncomingCalls")
}

func (unimplemented) OutgoingCalls(_ context.Context, _ *protocol.CallHierarchyOutgoingCallsParams) ([]protocol.CallHierarchyOutgoingCall, error) {
	return nil, notServed("OutgoingCalls")
}

func (unimplemented) SemanticTokensFull(_ context.Context, _ *protocol.SemanticTokensParams) (*protocol.SemanticTokens, error) {
	return nil, notServed("SemanticTokensFull")
}

func (unimplemented) SemanticTokensFullDelta(_ context.Context, _ *protocol.SemanticTokensDeltaParams) (interface{}, error) {
	return nil, notServed("SemanticTokensFullDelta")
}

func (unimplemented) SemanticTokensRange(_ context.Context, _ *protocol.SemanticTokensRangeParams) (*protocol.SemanticTokens, error) {
	return nil, notServed("SemanticTokensRange")
}

func (unimplemented) SemanticTokensRefresh(_ context.Context) error { return nil }

func (unimplemented) LinkedEditingRange(_ context.Context, _ *protocol.LinkedEditingRangeParams) (*protocol.LinkedEditingRanges, error) {
	return nil, notServed("LinkedEditingRange")
}

func (unimplemented) Moniker(_ context.Context, _ *protocol.MonikerParams) ([]protocol.Moniker, error) {
	return nil, notServed("Moniker")
}

// Request answers methods go.lsp.dev/protocol does not know.
func (unimplemented) Request(_ context.Context, method string, _ interface{}) (interface{}, error) {
	return nil, notServed(method)
}
