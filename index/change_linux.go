//go:build linux

package index

import (
	"os"
	"syscall"
	"time"
)

// sysID adds the device, inode and change time, which only the system
// sets (a copy that keeps the modification time still changes them).
func sysID(fi os.FileInfo, id *fileID) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id.dev, id.ino, id.nlink = uint64(st.Dev), uint64(st.Ino), uint64(st.Nlink)
		id.ctime = time.Unix(int64(st.Ctim.Sec), int64(st.Ctim.Nsec))
	}
}
