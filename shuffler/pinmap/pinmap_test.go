package pinmap

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"periph.io/x/conn/v3/gpio"
	"periph.io/x/conn/v3/gpio/gpiotest"
	"periph.io/x/conn/v3/physic"
)

func TestLogical(t *testing.T) {
	tests := []struct {
		name      string
		activeLow bool
		out       gpio.Level
		wantPin   gpio.Level
	}{
		{"active-high asserted", false, gpio.High, gpio.High},
		{"active-high released", false, gpio.Low, gpio.Low},
		{"active-low asserted", true, gpio.High, gpio.Low},
		{"active-low released", true, gpio.Low, gpio.High},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := &gpiotest.Pin{N: "GPIO4", Num: 4}
			p := Logical(raw, tt.activeLow)
			require.NoError(t, p.Out(tt.out))
			assert.Equal(t, tt.wantPin, raw.Read(), "physical level")
			assert.Equal(t, tt.out, p.Read(), "logical level reads back")
		})
	}
}

func TestLogicalPWMAndReal(t *testing.T) {
	raw := &gpiotest.Pin{N: "GPIO5", Num: 5}
	p := Logical(raw, true)
	require.NoError(t, p.PWM(gpio.DutyMax/4, physic.KiloHertz))
	assert.Equal(t, gpio.DutyMax-gpio.DutyMax/4, raw.D)
	assert.Error(t, p.PWM(-1, physic.KiloHertz))
	r, ok := p.(gpio.RealPin)
	require.True(t, ok)
	assert.Same(t, raw, r.Real())
	assert.Contains(t, p.String(), "active-low")
	assert.Same(t, raw, Logical(raw, false), "active-high is not wrapped")
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		cfgs []PinConfig
		want []error
	}{
		{"ok", []PinConfig{{Name: LightRed, Line: "GPIO17"}, {Name: CutCardSensor, Line: "GPIO27", ActiveLow: true}}, nil},
		{"unknown", []PinConfig{{Name: "light.blue", Line: "GPIO1"}}, []error{ErrUnknownFunction}},
		{"no line", []PinConfig{{Name: LightRed}}, []error{ErrNoLine}},
		{"same function", []PinConfig{{Name: LightRed, Line: "1"}, {Name: LightRed, Line: "2"}}, []error{ErrDuplicate}},
		{"same line", []PinConfig{{Name: LightRed, Line: "1"}, {Name: LightGreen, Line: "1"}}, []error{ErrDuplicate}},
		{"several", []PinConfig{{Name: "x"}, {Name: LightRed}}, []error{ErrUnknownFunction, ErrNoLine}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(tt.cfgs)
			if tt.want == nil {
				assert.NoError(t, err)
				return
			}
			for _, w := range tt.want {
				assert.ErrorIs(t, err, w)
			}
		})
	}
}

func TestSortedAndDirection(t *testing.T) {
	got := Sorted([]PinConfig{{Name: "zz"}, {Name: SwapDone}, {Name: LightRed}, {Name: "aa"}})
	var names []string
	for _, c := range got {
		names = append(names, c.Name)
	}
	assert.Equal(t, []string{LightRed, SwapDone, "aa", "zz"}, names)

	d, ok := DirectionOf(SwapRequest)
	assert.True(t, ok)
	assert.Equal(t, Output, d)
	assert.Equal(t, "output", d.String())
	_, ok = DirectionOf("nope")
	assert.False(t, ok)
	assert.Equal(t, "Direction(7)", Direction(7).String())
}

func TestOpen(t *testing.T) {
	board := map[string]*gpiotest.Pin{"GPIO17": {N: "GPIO17", Num: 17}, "GPIO27": {N: "GPIO27", Num: 27}}
	byName := func(line string) gpio.PinIO {
		if p, ok := board[line]; ok {
			return p
		}
		return nil
	}
	l, err := Open([]PinConfig{{Name: LightRed, Line: "GPIO17", ActiveLow: true}, {Name: CutCardSensor, Line: "GPIO27"}}, byName)
	require.NoError(t, err)
	require.NoError(t, l.Out(LightRed).Out(gpio.High))
	assert.Equal(t, gpio.Low, board["GPIO17"].Read(), "active-low lamp on")
	assert.NotNil(t, l.In(CutCardSensor))
	assert.Nil(t, l.In(SwapDone), "a line not configured is a nil interface")
	assert.Nil(t, l.Out(SwapRequest))

	_, err = Open([]PinConfig{{Name: LightRed, Line: "GPIO99"}, {Name: LightGreen, Line: "GPIO98"}}, byName)
	assert.ErrorIs(t, err, ErrNoSuchLine)
	assert.Contains(t, err.Error(), "GPIO98")
	_, err = Open([]PinConfig{{Name: "nope", Line: "GPIO17"}}, byName)
	assert.ErrorIs(t, err, ErrUnknownFunction)
}
