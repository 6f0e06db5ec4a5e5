package shoe

import "time"

// schedule carries out the timed faults (silence, unplug) from Run's loop.
type schedule struct {
	f            Faults
	silenceAt    time.Time // next change of silence
	silentNow    bool
	unplugAt     time.Time // next change of cable state
	unpluggedNow bool
}

func newSchedule(f Faults, now time.Time) *schedule {
	s := &schedule{f: f}
	if f.SilenceEvery > 0 {
		s.silenceAt = now.Add(f.SilenceEvery)
	}
	if f.UnplugEvery > 0 {
		s.unplugAt = now.Add(f.UnplugEvery)
	}
	return s
}

func (s *schedule) run(d *Device, now time.Time) {
	if !s.silenceAt.IsZero() && !now.Before(s.silenceAt) {
		s.silentNow = !s.silentNow
		d.SetSilent(s.silentNow)
		if s.silentNow {
			s.silenceAt = now.Add(s.f.SilenceFor)
		} else {
			s.silenceAt = now.Add(s.f.SilenceEvery)
		}
		d.log.Info().Bool("silent", s.silentNow).Msg("scheduled fault")
	}
	if !s.unplugAt.IsZero() && !now.Before(s.unplugAt) {
		var err error
		if s.unpluggedNow {
			err = d.Replug()
			s.unplugAt = now.Add(s.f.UnplugEvery)
		} else {
			err = d.Unplug()
			s.unplugAt = now.Add(s.f.UnplugFor)
		}
		s.unpluggedNow = !s.unpluggedNow
		d.log.Info().Err(err).Bool("unplugged", s.unpluggedNow).Str("path", d.Path()).Msg("scheduled fault")
	}
}
