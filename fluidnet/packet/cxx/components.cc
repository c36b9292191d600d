// ns-3 components that ns-3 does not ship, compiled at run time by cppyy (fluidnet.packet).
//
//   fluidnet::PiQueueDisc    the PI AQM of Hollot, Misra, Towsley & Gong (INFOCOM 2001):
//                            p(k) = p(k-1) + a (q(k) - q_ref) - b (q(k-1) - q_ref), sampled
//                            every Interval, arriving packets dropped (or ECN-marked) with p.
//   fluidnet::SbrmQueueDisc  Single Bit Resource Marking (Zimmermann 2005, (5.4.1)): each
//                            departing packet is CE-marked with m = 1 - exp(-gamma [b - b0]^+),
//                            b the backlog at its departure.
//   fluidnet::TcpSbrm        the SBRM source, Zimmermann's Direct Window Update (4.2.3): per ACK
//                            cwnd += kappa (w RTT / cwnd - marked), with DCTCP's per-packet ECN
//                            echo (RFC 8257 receiver) so that every ACK tells its own mark.
//   fluidnet::RcpTag, RcpQueueDisc, RcpSender, RcpReceiver
//                            the Rate Control Protocol of Dukkipati & McKeown (2004): routers
//                            update one rate R every T by their eq (2) and stamp it into packets
//                            (R_p = min(R_p, R)); receivers echo it; senders pace at it.
//
// Written for ns-3.44 (the `ns3` wheel on PyPI). Every class lives in namespace fluidnet and
// registers its TypeId under the name "fluidnet::<Class>".

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace fluidnet
{
using namespace ns3;

// ------------------------------------------------------------------------------ FIFO base
// The FIFO part every AQM below shares: one drop-tail internal queue of MaxSize packets, a
// packet that does not fit dropped before it is queued. An AQM marks or drops on top of it.
class FifoQueueDisc : public QueueDisc
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid =
            TypeId("fluidnet::FifoQueueDisc")
                .SetParent<QueueDisc>()
                .SetGroupName("Fluidnet")
                .AddAttribute("MaxSize",
                              "Buffer size",
                              QueueSizeValue(QueueSize("1000p")),
                              MakeQueueSizeAccessor(&QueueDisc::SetMaxSize, &QueueDisc::GetMaxSize),
                              MakeQueueSizeChecker());
        return tid;
    }

    FifoQueueDisc()
        : QueueDisc(QueueDiscSizePolicy::SINGLE_INTERNAL_QUEUE)
    {
    }

  protected:
    // Drop the packet ("Buffer full") when it does not fit in the buffer; true if dropped.
    bool DropIfFull(Ptr<QueueDiscItem> item)
    {
        if (GetCurrentSize() + item > GetMaxSize())
        {
            DropBeforeEnqueue(item, "Buffer full");
            return true;
        }
        return false;
    }

    // Queue the packet, or drop it when it does not fit; true if queued.
    bool EnqueueIfRoom(Ptr<QueueDiscItem> item)
    {
        return !DropIfFull(item) && GetInternalQueue(0)->Enqueue(item);
    }

    bool DoEnqueue(Ptr<QueueDiscItem> item) override
    {
        return EnqueueIfRoom(item);
    }

    Ptr<QueueDiscItem> DoDequeue() override
    {
        return GetInternalQueue(0)->Dequeue();
    }

    bool CheckConfig() override
    {
        if (GetNQueueDiscClasses() > 0 || GetNPacketFilters() > 0)
        {
            return false;
        }
        if (GetNInternalQueues() == 0)
        {
            AddInternalQueue(CreateObjectWithAttributes<DropTailQueue<QueueDiscItem>>(
                "MaxSize",
                QueueSizeValue(GetMaxSize())));
        }
        return GetNInternalQueues() == 1;
    }

    void InitializeParams() override
    {
    }
};

NS_OBJECT_ENSURE_REGISTERED(FifoQueueDisc);

// ------------------------------------------------------------------------------------- PI AQM
class PiQueueDisc : public FifoQueueDisc
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid =
            TypeId("fluidnet::PiQueueDisc")
                .SetParent<FifoQueueDisc>()
                .SetGroupName("Fluidnet")
                .AddConstructor<PiQueueDisc>()
                .AddAttribute("QueueRef",
                              "Reference queue length q_ref (packets)",
                              DoubleValue(50.0),
                              MakeDoubleAccessor(&PiQueueDisc::m_qRef),
                              MakeDoubleChecker<double>(0.0))
                .AddAttribute("A",
                              "Coefficient a of the discrete PI law",
                              DoubleValue(1.822e-5),
                              MakeDoubleAccessor(&PiQueueDisc::m_a),
                              MakeDoubleChecker<double>())
                .AddAttribute("B",
                              "Coefficient b of the discrete PI law",
                              DoubleValue(1.816e-5),
                              MakeDoubleAccessor(&PiQueueDisc::m_b),
                              MakeDoubleChecker<double>())
                .AddAttribute("Interval",
                              "Sampling interval of the PI law",
                              TimeValue(Seconds(1.0 / 160.0)),
                              MakeTimeAccessor(&PiQueueDisc::m_interval),
                              MakeTimeChecker())
                .AddAttribute("UseEcn",
                              "Mark ECN-capable packets instead of dropping them",
                              BooleanValue(false),
                              MakeBooleanAccessor(&PiQueueDisc::m_useEcn),
                              MakeBooleanChecker());
        return tid;
    }

    PiQueueDisc()
    {
        m_uv = CreateObject<UniformRandomVariable>();
    }

    double GetProbability() const
    {
        return m_p;
    }

  protected:
    void DoDispose() override
    {
        Simulator::Cancel(m_event);
        m_uv = nullptr;
        FifoQueueDisc::DoDispose();
    }

  private:
    bool DoEnqueue(Ptr<QueueDiscItem> item) override
    {
        if (DropIfFull(item))
        {
            return false;
        }
        if (m_p > 0 && m_uv->GetValue() < m_p)
        {
            if (!m_useEcn || !Mark(item, "PI mark"))
            {
                DropBeforeEnqueue(item, "PI drop");
                return false;
            }
        }
        return GetInternalQueue(0)->Enqueue(item);
    }


    void InitializeParams() override
    {
        m_p = 0.0;
        m_qOld = 0.0;
        m_event = Simulator::Schedule(m_interval, &PiQueueDisc::Update, this);
    }

    void Update()
    {
        double q = GetInternalQueue(0)->GetNPackets();
        m_p += m_a * (q - m_qRef) - m_b * (m_qOld - m_qRef);
        m_p = std::min(1.0, std::max(0.0, m_p));
        m_qOld = q;
        m_event = Simulator::Schedule(m_interval, &PiQueueDisc::Update, this);
    }

    double m_qRef{50.0};
    double m_a{0.0};
    double m_b{0.0};
    Time m_interval;
    bool m_useEcn{false};
    double m_p{0.0};
    double m_qOld{0.0};
    EventId m_event;
    Ptr<UniformRandomVariable> m_uv;
};

NS_OBJECT_ENSURE_REGISTERED(PiQueueDisc);

// --------------------------------------------------------------------------------- SBRM link
class SbrmQueueDisc : public FifoQueueDisc
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid =
            TypeId("fluidnet::SbrmQueueDisc")
                .SetParent<FifoQueueDisc>()
                .SetGroupName("Fluidnet")
                .AddConstructor<SbrmQueueDisc>()
                .AddAttribute("Gamma",
                              "Marking scale gamma (1/packet)",
                              DoubleValue(0.006),
                              MakeDoubleAccessor(&SbrmQueueDisc::m_gamma),
                              MakeDoubleChecker<double>(0.0))
                .AddAttribute("B0",
                              "Marking threshold b0 (packets)",
                              DoubleValue(50.0),
                              MakeDoubleAccessor(&SbrmQueueDisc::m_b0),
                              MakeDoubleChecker<double>(0.0));
        return tid;
    }

    SbrmQueueDisc()
    {
        m_uv = CreateObject<UniformRandomVariable>();
    }

    double GetMarkProbability() const
    {
        double excess = double(GetInternalQueue(0)->GetNPackets()) - m_b0;
        return excess > 0 ? 1.0 - std::exp(-m_gamma * excess) : 0.0;
    }

  protected:
    void DoDispose() override
    {
        m_uv = nullptr;
        FifoQueueDisc::DoDispose();
    }

  private:
    Ptr<QueueDiscItem> DoDequeue() override
    {
        Ptr<QueueDiscItem> item = GetInternalQueue(0)->Dequeue();
        if (item)
        {
            double m = GetMarkProbability(); // backlog behind the departing packet
            if (m > 0 && m_uv->GetValue() < m)
            {
                Mark(item, "SBRM mark"); // a packet that is not ECN-capable leaves unmarked
            }
        }
        return item;
    }

    double m_gamma{0.006};
    double m_b0{50.0};
    Ptr<UniformRandomVariable> m_uv;
};

NS_OBJECT_ENSURE_REGISTERED(SbrmQueueDisc);

// ------------------------------------------------------------------------------- SBRM source
// Zimmermann's Direct Window Update (4.2.3): every ACK changes the window (in packets) by
// kappa (w RTT / cwnd - p), p = 1 for an ACK that echoes a mark. TcpDctcp provides the
// per-packet ECN echo of the receiver (RFC 8257 state machine) and DctcpEcn mode; this class
// takes the window over entirely (HasCongControl), so TCP's own ECN and recovery reductions do
// not apply. Losses as TCP, as Zimmermann's ns-2 source (5.4.2) reacts to them: a fast
// retransmit halves the window, which then stays put until the recovery ends (the duplicate
// ACKs of a recovery neither grow it nor carry marks); a timeout restarts it from one packet
// (TcpSocketBase) with slow start up to half the window before it. (With HasCongControl, ns-3
// itself changes the window on neither: before, the window grew through every recovery, by one
// packet per duplicate ACK in slow start.)
class TcpSbrm : public TcpDctcp
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid =
            TypeId("fluidnet::TcpSbrm")
                .SetParent<TcpDctcp>()
                .SetGroupName("Fluidnet")
                .AddConstructor<TcpSbrm>()
                .AddAttribute("W",
                              "Willingness to pay w (packets/s)",
                              DoubleValue(20.0),
                              MakeDoubleAccessor(&TcpSbrm::m_w),
                              MakeDoubleChecker<double>(0.0))
                .AddAttribute("Kappa",
                              "Source gain kappa-bar (per ACK)",
                              DoubleValue(0.2),
                              MakeDoubleAccessor(&TcpSbrm::m_kappa),
                              MakeDoubleChecker<double>(0.0));
        return tid;
    }

    TcpSbrm() = default;
    TcpSbrm(const TcpSbrm& other) = default;

    std::string GetName() const override
    {
        return "TcpSbrm";
    }

    Ptr<TcpCongestionOps> Fork() override
    {
        return CopyObject<TcpSbrm>(this);
    }

    bool HasCongControl() const override
    {
        return true;
    }

    void CongControl(Ptr<TcpSocketState> tcb,
                     const TcpRateOps::TcpRateConnection& rc,
                     const TcpRateOps::TcpRateSample& rs) override
    {
    }

    void IncreaseWindow(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked) override
    {
    }

    uint32_t GetSsThresh(Ptr<const TcpSocketState> tcb, uint32_t bytesInFlight) override
    {
        return std::max(2 * tcb->m_segmentSize, tcb->m_cWnd.Get() / 2);
    }

    void CongestionStateSet(Ptr<TcpSocketState> tcb,
                            const TcpSocketState::TcpCongState_t newState) override
    {
        if (newState == TcpSocketState::CA_RECOVERY && m_written != 0)
        {
            m_cw = std::max(m_cw / 2, 1.0);
            m_slowStart = false;
            m_written = static_cast<uint32_t>(m_cw * tcb->m_segmentSize);
            tcb->m_cWnd = m_written;
        }
        else if (newState == TcpSocketState::CA_LOSS)
        {
            m_ssthresh = std::max(m_cw / 2, 2.0);
            m_slowStart = true;
        }
    }

    void PktsAcked(Ptr<TcpSocketState> tcb, uint32_t segmentsAcked, const Time& rtt) override
    {
        double seg = tcb->m_segmentSize;
        if (tcb->m_cWnd.Get() != m_written)
        {
            m_cw = tcb->m_cWnd.Get() / seg; // set by TCP itself (timeout, start)
        }
        if (segmentsAcked == 0 || tcb->m_congState == TcpSocketState::CA_RECOVERY)
        {
            return;
        }
        bool marked = tcb->m_ecnState == TcpSocketState::ECN_ECE_RCVD;
        if (m_slowStart && marked)
        {
            m_slowStart = false;
        }
        if (m_slowStart)
        {
            m_cw += segmentsAcked;
            m_slowStart = m_cw < m_ssthresh;
        }
        else
        {
            Time srtt = tcb->m_srtt.Get();
            double R = srtt.IsStrictlyPositive() ? srtt.GetSeconds() : rtt.GetSeconds();
            for (uint32_t k = 0; k < segmentsAcked; ++k)
            {
                m_cw += m_kappa * (m_w * R / std::max(m_cw, 1.0) - (marked ? 1.0 : 0.0));
            }
        }
        m_cw = std::max(m_cw, 1.0);
        m_written = static_cast<uint32_t>(m_cw * seg);
        tcb->m_cWnd = m_written;
    }

  private:
    double m_w{20.0};
    double m_kappa{0.2};
    double m_cw{1.0};
    uint32_t m_written{0};
    bool m_slowStart{true};
    double m_ssthresh{std::numeric_limits<double>::infinity()};
};

NS_OBJECT_ENSURE_REGISTERED(TcpSbrm);

// ---------------------------------------------------------------------------------------- RCP
// The RCP header as a packet tag: the rate field R_p (bit/s), the sender's RTT estimate, and
// what the packet is (SYN, SYN-ACK, data, ACK), its flow, sequence number and flow size.
class RcpTag : public Tag
{
  public:
    enum Kind : uint8_t
    {
        DATA = 0,
        SYN = 1,
        SYNACK = 2,
        ACK = 3,
    };

    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("fluidnet::RcpTag")
                                .SetParent<Tag>()
                                .SetGroupName("Fluidnet")
                                .AddConstructor<RcpTag>();
        return tid;
    }

    TypeId GetInstanceTypeId() const override
    {
        return GetTypeId();
    }

    uint32_t GetSerializedSize() const override
    {
        return 8 + 8 + 4 + 4 + 4 + 1;
    }

    void Serialize(TagBuffer i) const override
    {
        i.WriteDouble(rate);
        i.WriteDouble(rtt);
        i.WriteU32(flow);
        i.WriteU32(seq);
        i.WriteU32(size);
        i.WriteU8(kind);
    }

    void Deserialize(TagBuffer i) override
    {
        rate = i.ReadDouble();
        rtt = i.ReadDouble();
        flow = i.ReadU32();
        seq = i.ReadU32();
        size = i.ReadU32();
        kind = i.ReadU8();
    }

    void Print(std::ostream& os) const override
    {
        os << "rcp kind=" << int(kind) << " flow=" << flow << " seq=" << seq << " rate=" << rate;
    }

    double rate{std::numeric_limits<double>::infinity()};
    double rtt{0.0};
    uint32_t flow{0};
    uint32_t seq{0};
    uint32_t size{0};
    uint8_t kind{DATA};
};

// The RCP router (Dukkipati & McKeown 2004, Sec II, eq (2)): every T_eff = min(T, d0)
//   R <- R (1 + (T_eff/d0) (alpha (C - y) - beta q/d0) / C),
// y the measured input rate over the last interval, q the queue (bits), d0 the moving
// average of the RTTs carried by the packets (weight RttGain per packet); R clamped to
// [MinRate, C]. Every data or SYN packet leaves with R_p = min(R_p, R).
class RcpQueueDisc : public FifoQueueDisc
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid =
            TypeId("fluidnet::RcpQueueDisc")
                .SetParent<FifoQueueDisc>()
                .SetGroupName("Fluidnet")
                .AddConstructor<RcpQueueDisc>()
                .AddAttribute("Alpha",
                              "Gain on the spare capacity",
                              DoubleValue(0.1),
                              MakeDoubleAccessor(&RcpQueueDisc::m_alpha),
                              MakeDoubleChecker<double>(0.0))
                .AddAttribute("Beta",
                              "Gain on the queue-drain term",
                              DoubleValue(1.0),
                              MakeDoubleAccessor(&RcpQueueDisc::m_beta),
                              MakeDoubleChecker<double>(0.0))
                .AddAttribute("Capacity",
                              "Link capacity at the IP layer (bit/s)",
                              DoubleValue(1e7),
                              MakeDoubleAccessor(&RcpQueueDisc::m_capacity),
                              MakeDoubleChecker<double>(0.0))
                .AddAttribute("UpdateInterval",
                              "Rate update interval T (the interval is min(T, d0))",
                              TimeValue(MilliSeconds(10)),
                              MakeTimeAccessor(&RcpQueueDisc::m_interval),
                              MakeTimeChecker())
                .AddAttribute("InitialRtt",
                              "Initial value of the average RTT d0",
                              TimeValue(MilliSeconds(100)),
                              MakeTimeAccessor(&RcpQueueDisc::m_initialRtt),
                              MakeTimeChecker())
                .AddAttribute("RttGain",
                              "Weight of one packet's RTT in the average d0",
                              DoubleValue(0.02),
                              MakeDoubleAccessor(&RcpQueueDisc::m_rttGain),
                              MakeDoubleChecker<double>(0.0, 1.0))
                .AddAttribute("InitialRate",
                              "Rate R at time 0 as a fraction of the capacity",
                              DoubleValue(0.05),
                              MakeDoubleAccessor(&RcpQueueDisc::m_initialRate),
                              MakeDoubleChecker<double>(0.0, 1.0))
                .AddAttribute("MinRate",
                              "Smallest rate R as a fraction of the capacity",
                              DoubleValue(1e-4),
                              MakeDoubleAccessor(&RcpQueueDisc::m_minRate),
                              MakeDoubleChecker<double>(0.0, 1.0));
        return tid;
    }

    RcpQueueDisc()
    {
    }

    // The rate R as a fraction of the capacity.
    double GetNormalizedRate() const
    {
        return m_rate / m_capacity;
    }

  protected:
    void DoDispose() override
    {
        Simulator::Cancel(m_event);
        FifoQueueDisc::DoDispose();
    }

  private:
    bool DoEnqueue(Ptr<QueueDiscItem> item) override
    {
        m_inputBytes += item->GetSize();
        Ptr<Packet> p = item->GetPacket();
        RcpTag tag;
        if (p->PeekPacketTag(tag) && (tag.kind == RcpTag::DATA || tag.kind == RcpTag::SYN))
        {
            p->RemovePacketTag(tag);
            if (tag.rtt > 0)
            {
                m_d0 = m_rttGain * tag.rtt + (1.0 - m_rttGain) * m_d0;
            }
            tag.rate = std::min(tag.rate, m_rate);
            p->AddPacketTag(tag);
        }
        return EnqueueIfRoom(item);
    }


    void InitializeParams() override
    {
        m_rate = m_initialRate * m_capacity;
        m_d0 = m_initialRtt.GetSeconds();
        m_inputBytes = 0;
        m_last = Simulator::Now();
        m_event = Simulator::Schedule(NextInterval(), &RcpQueueDisc::Update, this);
    }

    Time NextInterval() const
    {
        return std::min(m_interval, Seconds(m_d0));
    }

    void Update()
    {
        double elapsed = (Simulator::Now() - m_last).GetSeconds();
        if (elapsed > 0)
        {
            double y = 8.0 * m_inputBytes / elapsed;
            double q = 8.0 * GetInternalQueue(0)->GetNBytes();
            double C = m_capacity;
            double change = (elapsed / m_d0) * (m_alpha * (C - y) - m_beta * q / m_d0) / C;
            m_rate = std::min(C, std::max(m_minRate * C, m_rate * (1.0 + change)));
        }
        m_inputBytes = 0;
        m_last = Simulator::Now();
        m_event = Simulator::Schedule(NextInterval(), &RcpQueueDisc::Update, this);
    }

    double m_alpha{0.1};
    double m_beta{1.0};
    double m_capacity{1e7};
    Time m_interval;
    Time m_initialRtt;
    double m_rttGain{0.02};
    double m_initialRate{0.05};
    double m_minRate{1e-4};
    double m_rate{0.0};
    double m_d0{0.1};
    uint64_t m_inputBytes{0};
    Time m_last;
    EventId m_event;
};

NS_OBJECT_ENSURE_REGISTERED(RcpQueueDisc);

// Where the receivers report what they received (set by fluidnet::Experiment).
class FlowLedger
{
  public:
    virtual ~FlowLedger() = default;
    virtual void Received(uint32_t flow, uint32_t bytes, bool complete) = 0;
};

// An RCP sender: a SYN (one round trip to learn the path's rate), then its packets paced at the
// rate the last ACK echoed. Flows of `size` packets end when every packet is acknowledged
// (packets not acknowledged within max(2 RTT, 10 ms) of being sent are sent again); size 0 is a
// flow that never ends.
class RcpSender : public Application
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("fluidnet::RcpSender")
                                .SetParent<Application>()
                                .SetGroupName("Fluidnet")
                                .AddConstructor<RcpSender>();
        return tid;
    }

    void Setup(Address remote, uint16_t localPort, uint32_t flow, uint32_t size, uint32_t payload)
    {
        m_remote = remote;
        m_localPort = localPort;
        m_flow = flow;
        m_size = size;
        m_payload = payload;
        if (size > 0)
        {
            m_acked.assign(size, false);
            m_sentAt.assign(size, -1.0);
        }
    }

    double GetRate() const
    {
        return m_rate;
    }

    double GetRtt() const
    {
        return m_srtt;
    }

  protected:
    void DoDispose() override
    {
        m_socket = nullptr;
        Application::DoDispose();
    }

  private:
    void StartApplication() override
    {
        m_socket = Socket::CreateSocket(GetNode(), UdpSocketFactory::GetTypeId());
        m_socket->Bind(InetSocketAddress(Ipv4Address::GetAny(), m_localPort));
        m_socket->Connect(m_remote);
        m_socket->SetRecvCallback(MakeCallback(&RcpSender::Receive, this));
        SendSyn();
    }

    void StopApplication() override
    {
        Simulator::Cancel(m_sendEvent);
        Simulator::Cancel(m_synEvent);
        m_done = true;
        if (m_socket)
        {
            m_socket->Close();
        }
    }

    void SendSyn()
    {
        m_synAt = Simulator::Now().GetSeconds();
        Ptr<Packet> p = Create<Packet>(0);
        RcpTag tag;
        tag.kind = RcpTag::SYN;
        tag.flow = m_flow;
        tag.size = m_size;
        p->AddPacketTag(tag);
        m_socket->Send(p);
        m_synEvent = Simulator::Schedule(Seconds(1.0), &RcpSender::SendSyn, this);
    }

    void Receive(Ptr<Socket> socket)
    {
        Ptr<Packet> p;
        while ((p = socket->Recv()))
        {
            RcpTag tag;
            if (!p->PeekPacketTag(tag))
            {
                continue;
            }
            double now = Simulator::Now().GetSeconds();
            if (tag.kind == RcpTag::SYNACK && !m_established)
            {
                Simulator::Cancel(m_synEvent);
                m_established = true;
                m_rate = tag.rate;
                m_srtt = now - m_synAt;
                SendNext();
            }
            else if (tag.kind == RcpTag::ACK && !m_done)
            {
                if (std::isfinite(tag.rate) && tag.rate > 0)
                {
                    m_rate = tag.rate;
                }
                if (m_size > 0 && tag.seq < m_size && !m_acked[tag.seq])
                {
                    m_acked[tag.seq] = true;
                    ++m_nAcked;
                    if (!m_resent.count(tag.seq))
                    {
                        RttSample(now - m_sentAt[tag.seq]);
                    }
                    if (m_nAcked == m_size)
                    {
                        m_done = true;
                        Simulator::Cancel(m_sendEvent);
                        // free the socket's endpoint: ns-3 looks endpoints up one by one, and a
                        // run of thousands of finished flows would slow down every packet
                        Simulator::ScheduleNow(&RcpSender::CloseSocket, this);
                    }
                }
                else if (m_size == 0)
                {
                    auto it = m_ringSentAt.find(tag.seq);
                    if (it != m_ringSentAt.end())
                    {
                        RttSample(now - it->second);
                        m_ringSentAt.erase(it);
                    }
                }
            }
        }
    }

    void CloseSocket()
    {
        if (m_socket)
        {
            m_socket->Close();
        }
    }

    void RttSample(double sample)
    {
        m_srtt = (m_srtt > 0) ? 0.875 * m_srtt + 0.125 * sample : sample;
    }

    // The next packet to send: a new one, else the oldest unacknowledged one whose time is up.
    bool NextSeq(uint32_t& seq, double now)
    {
        if (m_size == 0 || m_next < m_size)
        {
            seq = m_next++;
            return true;
        }
        double timeout = std::max(2.0 * m_srtt, 0.01);
        for (uint32_t k = 0; k < m_size; ++k)
        {
            uint32_t s = (m_scan + k) % m_size;
            if (!m_acked[s] && now - m_sentAt[s] >= timeout)
            {
                m_scan = s + 1;
                m_resent.insert(s);
                seq = s;
                return true;
            }
        }
        return false;
    }

    void SendNext()
    {
        if (m_done)
        {
            return;
        }
        double now = Simulator::Now().GetSeconds();
        uint32_t seq;
        double gap = 8.0 * (m_payload + 28) / std::max(m_rate, 1.0);
        if (!NextSeq(seq, now))
        {
            m_sendEvent = Simulator::Schedule(Seconds(std::max(gap, 0.001)), &RcpSender::SendNext, this);
            return;
        }
        Ptr<Packet> p = Create<Packet>(m_payload);
        RcpTag tag;
        tag.kind = RcpTag::DATA;
        tag.flow = m_flow;
        tag.seq = seq;
        tag.size = m_size;
        tag.rtt = m_srtt;
        p->AddPacketTag(tag);
        m_socket->Send(p);
        if (m_size > 0)
        {
            m_sentAt[seq] = now;
        }
        else if (seq % 8 == 0)
        {
            m_ringSentAt[seq] = now;
            if (m_ringSentAt.size() > 4096)
            {
                m_ringSentAt.erase(m_ringSentAt.begin());
            }
        }
        m_sendEvent = Simulator::Schedule(Seconds(gap), &RcpSender::SendNext, this);
    }

    Ptr<Socket> m_socket;
    Address m_remote;
    uint16_t m_localPort{0};
    uint32_t m_flow{0};
    uint32_t m_size{0};
    uint32_t m_payload{1000};
    bool m_established{false};
    bool m_done{false};
    double m_rate{0.0};
    double m_srtt{0.0};
    double m_synAt{0.0};
    uint32_t m_next{0};
    uint32_t m_nAcked{0};
    uint32_t m_scan{0};
    std::vector<bool> m_acked;
    std::vector<double> m_sentAt;
    std::set<uint32_t> m_resent;
    std::map<uint32_t, double> m_ringSentAt;
    EventId m_sendEvent;
    EventId m_synEvent;
};

// An RCP receiver: answers a SYN with a SYN-ACK and every data packet with an ACK, both echoing
// the packet's rate field; reports new packets (and a flow's completion) to the ledger.
class RcpReceiver : public Application
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("fluidnet::RcpReceiver")
                                .SetParent<Application>()
                                .SetGroupName("Fluidnet")
                                .AddConstructor<RcpReceiver>();
        return tid;
    }

    void Setup(uint16_t port, FlowLedger* ledger, uint32_t payload)
    {
        m_port = port;
        m_ledger = ledger;
        m_payload = payload;
    }

  protected:
    void DoDispose() override
    {
        m_socket = nullptr;
        Application::DoDispose();
    }

  private:
    void StartApplication() override
    {
        m_socket = Socket::CreateSocket(GetNode(), UdpSocketFactory::GetTypeId());
        m_socket->Bind(InetSocketAddress(Ipv4Address::GetAny(), m_port));
        m_socket->SetRecvCallback(MakeCallback(&RcpReceiver::Receive, this));
    }

    void StopApplication() override
    {
        if (m_socket)
        {
            m_socket->Close();
        }
    }

    void Receive(Ptr<Socket> socket)
    {
        Ptr<Packet> p;
        Address from;
        while ((p = socket->RecvFrom(from)))
        {
            RcpTag tag;
            if (!p->PeekPacketTag(tag))
            {
                continue;
            }
            RcpTag reply;
            reply.flow = tag.flow;
            reply.seq = tag.seq;
            reply.rate = tag.rate;
            if (tag.kind == RcpTag::SYN)
            {
                reply.kind = RcpTag::SYNACK;
            }
            else if (tag.kind == RcpTag::DATA)
            {
                reply.kind = RcpTag::ACK;
                Count(tag);
            }
            else
            {
                continue;
            }
            Ptr<Packet> r = Create<Packet>(0);
            r->AddPacketTag(reply);
            socket->SendTo(r, 0, from);
        }
    }

    void Count(const RcpTag& tag)
    {
        if (tag.size == 0)
        {
            m_ledger->Received(tag.flow, m_payload, false);
            return;
        }
        auto& seen = m_seen[tag.flow];
        if (seen.empty())
        {
            seen.assign(tag.size, false);
            m_count[tag.flow] = 0;
        }
        if (tag.seq < seen.size() && !seen[tag.seq])
        {
            seen[tag.seq] = true;
            uint32_t n = ++m_count[tag.flow];
            bool complete = n == tag.size;
            m_ledger->Received(tag.flow, m_payload, complete);
            if (complete)
            {
                m_seen.erase(tag.flow);
                m_count.erase(tag.flow);
            }
        }
    }

    Ptr<Socket> m_socket;
    uint16_t m_port{9};
    uint32_t m_payload{1000};
    FlowLedger* m_ledger{nullptr};
    std::map<uint32_t, std::vector<bool>> m_seen;
    std::map<uint32_t, uint32_t> m_count;
};

// -------------------------------------------------------------------------------- TCP sender
// What a congestion control object implements to hear of its flow's feedback packet by packet
// (fluidnet::TcpKelly): every ACK segment the socket receives (whether it echoes an ECN mark), and
// every data packet of the flow the network lost (told by the network, fluidnet::Experiment, as
// the negative acknowledgments of Kunniyur & Srikant's window laws).
class SignalListener
{
  public:
    virtual ~SignalListener() = default;
    virtual void AckReceived(bool echo) = 0;
    virtual void PacketLost() = 0;
};

// What a congestion control object implements to see its flow's packets (fluidnet::TcpXcp writes
// its congestion header into every data packet and reads the echoed feedback from every ACK): the
// sender hands it the socket when the flow starts, to connect to the socket's Tx and Rx traces.
class SocketObserver
{
  public:
    virtual ~SocketObserver() = default;
    virtual void Attach(Ptr<TcpSocketBase> socket) = 0;
};

// A TCP sender whose congestion control object is made here (so every flow group can have its
// own law and parameters), which sends `bytes` (0: without end) and follows its socket's window,
// slow-start threshold and RTT samples for the traces; a congestion control object that is a
// SignalListener hears of every ACK and of every loss of the flow, one that is a SocketObserver
// is handed the socket.
class TcpSender : public Application
{
  public:
    static TypeId GetTypeId()
    {
        static TypeId tid = TypeId("fluidnet::TcpSender")
                                .SetParent<Application>()
                                .SetGroupName("Fluidnet")
                                .AddConstructor<TcpSender>();
        return tid;
    }

    void Setup(Address remote, uint16_t localPort, uint64_t bytes, ObjectFactory congestion, bool ecn)
    {
        m_remote = remote;
        m_localPort = localPort;
        m_bytes = bytes;
        m_congestion = congestion;
        m_ecn = ecn;
    }

    double GetCwnd() const
    {
        return m_cwnd;
    }

    double GetRtt() const
    {
        return m_rtt;
    }

    double GetSsThresh() const
    {
        return m_ssthresh;
    }

    // The network lost one of this flow's data packets (a negative acknowledgment).
    void PacketLost()
    {
        if (m_listener != nullptr)
        {
            m_listener->PacketLost();
        }
    }

  protected:
    void DoDispose() override
    {
        m_socket = nullptr;
        m_listener = nullptr;
        Application::DoDispose();
    }

  private:
    void StartApplication() override
    {
        m_socket = Socket::CreateSocket(GetNode(), TcpSocketFactory::GetTypeId());
        Ptr<TcpSocketBase> tcp = DynamicCast<TcpSocketBase>(m_socket);
        if (m_ecn)
        {
            tcp->SetUseEcn(TcpSocketState::On);
        }
        Ptr<TcpCongestionOps> ops = m_congestion.Create<TcpCongestionOps>();
        tcp->SetCongestionControlAlgorithm(ops);
        m_listener = dynamic_cast<SignalListener*>(PeekPointer(ops));
        if (m_listener != nullptr)
        {
            m_socket->TraceConnectWithoutContext("Rx", MakeCallback(&TcpSender::OnRx, this));
        }
        if (auto* observer = dynamic_cast<SocketObserver*>(PeekPointer(ops)))
        {
            observer->Attach(tcp);
        }
        m_socket->TraceConnectWithoutContext("CongestionWindow",
                                             MakeCallback(&TcpSender::OnCwnd, this));
        m_socket->TraceConnectWithoutContext("SlowStartThreshold",
                                             MakeCallback(&TcpSender::OnSsThresh, this));
        m_socket->TraceConnectWithoutContext("RTT", MakeCallback(&TcpSender::OnRtt, this));
        m_socket->Bind(InetSocketAddress(Ipv4Address::GetAny(), m_localPort));
        m_socket->SetConnectCallback(MakeCallback(&TcpSender::Connected, this),
                                     MakeCallback(&TcpSender::Failed, this));
        m_socket->SetSendCallback(MakeCallback(&TcpSender::Space, this));
        m_socket->Connect(m_remote);
    }

    void StopApplication() override
    {
        if (m_socket)
        {
            m_socket->Close();
        }
    }

    void OnCwnd(uint32_t, uint32_t now)
    {
        m_cwnd = now;
    }

    void OnRtt(Time, Time now)
    {
        m_rtt = now.GetSeconds();
    }

    void OnSsThresh(uint32_t, uint32_t now)
    {
        m_ssthresh = now;
    }

    void OnRx(Ptr<const Packet>, const TcpHeader& header, Ptr<const TcpSocketBase>)
    {
        uint8_t flags = header.GetFlags();
        if ((flags & TcpHeader::ACK) && !(flags & TcpHeader::SYN))
        {
            m_listener->AckReceived(flags & TcpHeader::ECE);
        }
    }

    void Connected(Ptr<Socket>)
    {
        Fill();
    }

    void Failed(Ptr<Socket>)
    {
    }

    void Space(Ptr<Socket>, uint32_t)
    {
        Fill();
    }

    void Fill()
    {
        const uint32_t chunk = 16384;
        while (!m_closed && (m_bytes == 0 || m_sent < m_bytes))
        {
            uint64_t want = chunk;
            if (m_bytes > 0)
            {
                want = std::min<uint64_t>(want, m_bytes - m_sent);
            }
            uint32_t room = m_socket->GetTxAvailable();
            if (room == 0)
            {
                return;
            }
            want = std::min<uint64_t>(want, room);
            int n = m_socket->Send(Create<Packet>(static_cast<uint32_t>(want)));
            if (n <= 0)
            {
                return;
            }
            m_sent += n;
        }
        if (m_bytes > 0 && m_sent >= m_bytes && !m_closed)
        {
            m_closed = true;
            m_socket->Close();
        }
    }

    Ptr<Socket> m_socket;
    Address m_remote;
    uint16_t m_localPort{0};
    uint64_t m_bytes{0};
    uint64_t m_sent{0};
    bool m_closed{false};
    bool m_ecn{false};
    ObjectFactory m_congestion;
    SignalListener* m_listener{nullptr};
    double m_cwnd{0.0};
    double m_rtt{0.0};
    double m_ssthresh{std::numeric_limits<double>::quiet_NaN()};
};

} // namespace fluidnet
