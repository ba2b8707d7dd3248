"""Mount tables for fixture hosts, in the formats the kernel and fstab(5) write, with lines as real hosts show them;
and a fixture root made a live view of this machine (what the node-problem-detector DaemonSet's /host is).

Sources of the lines:
- `/proc/self/mounts` of an Ubuntu 22.04 EC2 instance (a trn1 or a DLAMI): the root on `/dev/root` ext4 with
  `discard,errors=remount-ro`, /boot/efi vfat, /run and /dev/shm tmpfs, as the Ubuntu cloud image mounts them.
- An EFS file system as AWS's EFS user guide has it mounted (`nfs4`, `vers=4.1,rsize=1048576,wsize=1048576,hard,
  timeo=600,retrans=2,noresvport`), the options ParallelCluster's own tests mount it with.
- FSx for Lustre as a ParallelCluster node's `/proc/mounts` shows it, printed by the cluster's diagnostic check
  (aws-parallelcluster-cookbook): `192.168.50.246@tcp:/6cz4zbev /fsx lustre rw,noatime,checksum,flock,user_xattr,
  lruresize,lazystatfs,nouser_fid2path,verbose,encrypt 0 0`, beside the head node's NFS exports (`/home nfs4`).
- fstab: the Ubuntu cloud image's `LABEL=cloudimg-rootfs / ext4 discard,errors=remount-ro 0 1`, and the AWS CDK's
  FSx example line `DNS@tcp:/MOUNTNAME /mnt/fsx lustre defaults,noatime,flock,_netdev 0 0`.
- mountinfo: proc_pid_mountinfo(5)'s layout, as an EKS node's init shows its root and a pod's volume.
"""

from __future__ import annotations

import os
from pathlib import Path

UBUNTU_TRN1_MOUNTS = """\
sysfs /sys sysfs rw,nosuid,nodev,noexec,relatime 0 0
proc /proc proc rw,nosuid,nodev,noexec,relatime 0 0
udev /dev devtmpfs rw,nosuid,relatime,size=262848932k,nr_inodes=65712233,mode=755,inode64 0 0
devpts /dev/pts devpts rw,nosuid,noexec,relatime,gid=5,mode=620,ptmxmode=000 0 0
tmpfs /run tmpfs rw,nosuid,nodev,noexec,relatime,size=52579952k,mode=755,inode64 0 0
/dev/root / ext4 rw,relatime,discard,errors=remount-ro 0 0
tmpfs /dev/shm tmpfs rw,nosuid,nodev,inode64 0 0
/dev/nvme0n1p15 /boot/efi vfat rw,relatime,fmask=0077,dmask=0077,codepage=437,iocharset=iso8859-1,shortname=mixed,\
errors=remount-ro 0 0
"""

EFS_LINE = ("fs-0a1b2c3d4e5f67890.efs.us-east-1.amazonaws.com:/ {point} nfs4 rw,relatime,vers=4.1,rsize=1048576,"
            "wsize=1048576,namlen=255,hard,noresvport,proto=tcp,timeo=600,retrans=2,sec=sys,clientaddr=172.31.20.11,"
            "local_lock=none,addr=172.31.30.40 0 0\n")
FSX_LINE = ("192.168.50.246@tcp:/6cz4zbev {point} lustre rw,noatime,checksum,flock,user_xattr,lruresize,lazystatfs,"
            "nouser_fid2path,verbose,encrypt 0 0\n")
HOME_NFS_LINE = ("192.168.3.180:/home /home nfs4 rw,noatime,vers=4.2,rsize=1048576,wsize=1048576,namlen=255,hard,"
                 "proto=tcp,timeo=600,retrans=2,sec=sys,clientaddr=192.168.49.160,local_lock=none,"
                 "addr=192.168.3.180 0 0\n")
UBUNTU_FSTAB = """\
LABEL=cloudimg-rootfs	/	 ext4	discard,errors=remount-ro	0 1
LABEL=UEFI	/boot/efi	vfat	umask=0077	0 1
"""
FSX_FSTAB_LINE = "fs-0123456789abcdef0.fsx.us-east-1.amazonaws.com@tcp:/abcdefgh {point} lustre " \
                 "defaults,noatime,flock,_netdev 0 0\n"
EKS_MOUNTINFO = """\
22 1 259:1 / / rw,noatime shared:1 - xfs /dev/nvme0n1p1 rw,attr2,inode64,logbufs=8,logbsize=32k,sunit=1024,\
swidth=1024,noquota
23 22 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:14 - proc proc rw
24 22 0:22 / /sys rw,nosuid,nodev,noexec,relatime shared:6 - sysfs sysfs rw
25 22 0:5 / /dev rw,nosuid shared:2 - devtmpfs devtmpfs rw,size=3980292k,nr_inodes=995073,mode=755
26 22 0:24 / /run rw,nosuid,nodev shared:23 - tmpfs tmpfs rw,mode=755
"""


def write_table(root: Path, inner: str, text: str) -> Path:
    """A mount table file at its in-root path."""
    path = root / inner.lstrip("/")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _escaped(point: str) -> str:
    return point.replace("\\", "\\134").replace(" ", "\\040").replace("\t", "\\011").replace("\n", "\\012")


def as_live_view(root: Path) -> None:
    """Make a fixture root a live view of this machine, as /host is in the node-problem-detector pod: this boot's
    id, and init's mountinfo naming, for the root and every machine mount under it, the device it really is on."""
    write_table(root, "/proc/sys/kernel/random/boot_id", Path("/proc/sys/kernel/random/boot_id").read_text())
    device = os.stat(root).st_dev
    lines = [f"1 0 {os.major(device)}:{os.minor(device)} / / rw,relatime shared:1 - ext4 /dev/root rw"]
    prefix = str(root).rstrip("/") + "/"
    for number, line in enumerate(Path("/proc/self/mountinfo").read_text().splitlines(), start=2):
        fields = line.split()
        point = fields[4].replace("\\040", " ")
        if point.startswith(prefix):
            inner = _escaped("/" + point[len(prefix):])
            lines.append(" ".join([str(number), "1", fields[2], fields[3], inner, *fields[5:]]))
    write_table(root, "/proc/1/mountinfo", "\n".join(lines) + "\n")
