package tokens

import "crypto/subtle"

var compareCT = subtle.ConstantTimeCompare
