package protocol

// WebSocket close status codes the protocol uses (RFC 6455, section 7.4,
// and the IANA registry for 1013). They are untyped, so that they can be
// passed as the status type of any WebSocket library and compared with
// it. The values are part of the wire contract: never change them.
const (
	// CloseNormal ends a connection that has nothing more to say.
	CloseNormal = 1000
	// CloseGoingAway: the gateway or the node is shutting down.
	CloseGoingAway = 1001
	// CloseUnsupportedData answers a binary frame after connect.
	CloseUnsupportedData = 1003
	// ClosePolicyViolation follows a refused connect (and any frame before a
	// successful one), a connect that did not come in time, a missed ping,
	// a node replaced by a newer connection with its id, and a node token
	// revoked by a config reload.
	ClosePolicyViolation = 1008
	// CloseMessageTooBig answers a text frame over ReadLimit.
	CloseMessageTooBig = 1009
	// CloseInternalError: the gateway could not send the connect answer.
	CloseInternalError = 1011
	// CloseTryAgainLater refuses a connect the gateway has no room for
	// (CodeUnavailable); the node retries with backoff.
	CloseTryAgainLater = 1013
)

// Close reasons: the text that goes with a close status, sent by the
// gateway (the first group) or by the node. A refused frame is closed with
// its error code (CodeUnauthorized, …) as reason.
const (
	// CloseReasonReplaced (with ClosePolicyViolation): a newer connection
	// with the same node id took this one's place.
	CloseReasonReplaced       = "replaced"
	CloseReasonConnectTimeout = "connect timeout"
	CloseReasonPingTimeout    = "ping timeout"
	CloseReasonTokenRevoked   = "token revoked"
	CloseReasonGatewayFull    = "gateway full"
	CloseReasonBinaryFrame    = "binary frames are not part of the protocol"
	CloseReasonWriteFailed    = "write failed"
	CloseReasonAnswerFailed   = "connect answer failed"
	CloseReasonGatewayStop    = "gateway shutting down"

	CloseReasonNodeStop = "node shutting down"
	// CloseReasonNodeMoved (with CloseGoingAway): the node is connected to
	// a replica it prefers and leaves this one.
	CloseReasonNodeMoved = "node moved to a preferred replica"
)
