package rmcore

import (
	"github.com/bobbin-yarn/bobbin/records"
	"github.com/bobbin-yarn/bobbin/resourcemanager/scheduler"
)

// EngineID is the engine's id for a YARN application. The two conversions here are the
// only place the RM crosses between YARN's ids and the engine's.
func EngineID(id records.ApplicationID) scheduler.AppID { return scheduler.AppID(id.String()) }

// yarnAppID is the YARN application an engine id names (the engine holds only ids the RM
// gave it).
func yarnAppID(id scheduler.AppID) (records.ApplicationID, error) {
	return records.ParseApplicationID(string(id))
}
