package shoeproto

// CRC-16/CCITT-FALSE: polynomial 0x1021 (x^16 + x^12 + x^5 + 1), initial
// value 0xFFFF, input and output not reflected, no final XOR. Its check value
// (the CRC of the ASCII bytes "123456789") is 0x29B1. It is the CRC most
// microcontroller SDKs ship, so a firmware team can use its vendor's routine.

// CRCInit is the initial value of the CRC register.
const CRCInit uint16 = 0xFFFF

// CRCPoly is the generator polynomial, non-reflected form.
const CRCPoly uint16 = 0x1021

// CRCCheck is the CRC of "123456789", the standard check value.
const CRCCheck uint16 = 0x29B1

var crcTable = makeCRCTable()

func makeCRCTable() (t [256]uint16) {
	for i := range t {
		c := uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ CRCPoly
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}

// UpdateCRC adds p to the running CRC crc. Start from CRCInit.
func UpdateCRC(crc uint16, p []byte) uint16 {
	for _, b := range p {
		crc = crc<<8 ^ crcTable[byte(crc>>8)^b]
	}
	return crc
}

// CRC returns the CRC-16/CCITT-FALSE of p.
func CRC(p []byte) uint16 { return UpdateCRC(CRCInit, p) }
